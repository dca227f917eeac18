"""The settings schema read back from config.py's annotations, for a front end to build its editors from.

Each field of every section becomes a FieldSpec (its kind, range, choices, title, help and hints), each section a
PageSpec; nothing here knows a field by name, so a field added to config.py shows up with no other code. Qt-free:
the Settings dialog (gui/settings/) turns these into widgets, and a test checks that its widgets agree.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import msgspec

from .config import Settings

FieldKind = Literal["int", "float", "str", "bool", "choice", "lines"]
INT_LIMIT = 2**31 - 1  # the widest whole number a spin box holds


@dataclass(frozen=True)
class FieldSpec:
    """One setting as an editor needs it. ``minimum``/``maximum`` are the schema's bounds (None: unbounded);
    ``*_exclusive`` says the bound itself is not allowed (msgspec's gt/lt)."""

    keys: tuple[str, ...]
    kind: FieldKind
    default: Any
    title: str
    help: str = ""
    minimum: float | None = None
    maximum: float | None = None
    min_exclusive: bool = False
    max_exclusive: bool = False
    choices: tuple[Any, ...] = ()
    hints: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def name(self) -> str:
        return ".".join(self.keys)

    @property
    def hidden(self) -> bool:
        return self.hints.get("widget") == "hidden"

    def value_in(self, settings: Settings) -> Any:
        value: Any = settings
        for k in self.keys:
            value = getattr(value, k)
        return value

    def label(self, choice: Any) -> str:
        return str(self.hints.get("labels", {}).get(choice, choice))


@dataclass(frozen=True)
class PageSpec:
    """A section of the settings (``key`` "" for Settings' own top-level fields) as one page."""

    key: str
    title: str
    note: str
    order: int
    fields: tuple[FieldSpec, ...]

    @property
    def visible_fields(self) -> tuple[FieldSpec, ...]:
        return tuple(f for f in self.fields if not f.hidden)


def _metas(hint: Any) -> tuple[Any, list[msgspec.Meta]]:
    """The bare type under (nested) Annotated, and every msgspec.Meta attached on the way."""
    metas: list[msgspec.Meta] = []
    while typing.get_origin(hint) is Annotated:
        base, *extra = typing.get_args(hint)
        metas.extend(m for m in extra if isinstance(m, msgspec.Meta))
        hint = base
    return hint, metas


def field_spec(keys: tuple[str, ...], hint: Any, default: Any) -> FieldSpec:
    """The FieldSpec of one annotated field; TypeError for a type no editor exists for (mark it hidden)."""
    base, metas = _metas(hint)
    info: dict[str, Any] = {"hints": {}}
    for m in metas:
        for bound, key, exclusive in (("ge", "minimum", False), ("gt", "minimum", True),
                                      ("le", "maximum", False), ("lt", "maximum", True)):
            if getattr(m, bound) is not None:
                info[key] = getattr(m, bound)
                info["min_exclusive" if key == "minimum" else "max_exclusive"] = exclusive
        if m.title:
            info["title"] = m.title
        if m.description:
            info["help"] = m.description
        if m.extra:
            info["hints"] = {**info["hints"], **m.extra}
    title = info.pop("title", keys[-1].replace("_", " ").capitalize())
    origin = typing.get_origin(base)
    kind: FieldKind
    if info["hints"].get("widget") == "hidden":
        kind = "str"
    elif origin is Literal:
        kind, info["choices"] = "choice", typing.get_args(base)
    elif base is bool:
        kind = "bool"
    elif base is int:
        kind = "int"
    elif base is float:
        kind = "float"
    elif base is str:
        kind = "str"
    elif origin is tuple and typing.get_args(base) == (str, Ellipsis):
        kind = "lines"
    else:
        raise TypeError(f"settings field {'.'.join(keys)}: no editor for {base!r}; give it ui(..., widget='hidden')")
    return FieldSpec(keys=keys, kind=kind, default=default, title=title, **info)


def _page_info(cls: Any) -> tuple[str, str, int]:
    title, note, order = getattr(cls, "__settings_page__", ("", "", 100))
    return title, note, order


def pages() -> list[PageSpec]:
    """Every section as a page (Settings' own scalar fields make the first), in the sections' ``order``."""
    defaults = Settings()
    top_hints = typing.get_type_hints(Settings, include_extras=True)
    out: list[PageSpec] = []
    top: list[FieldSpec] = []
    for f in dataclasses.fields(Settings):
        hint = top_hints[f.name]
        section = getattr(defaults, f.name)
        if dataclasses.is_dataclass(section):
            cls: Any = type(section)
            hints = typing.get_type_hints(cls, include_extras=True)
            specs = tuple(field_spec((f.name, sf.name), hints[sf.name], getattr(section, sf.name))
                          for sf in dataclasses.fields(cls))
            title, note, order = _page_info(cls)
            out.append(PageSpec(f.name, title or f.name.replace("_", " ").capitalize(), note, order, specs))
        else:
            top.append(field_spec((f.name,), hint, getattr(defaults, f.name)))
    title, note, order = _page_info(Settings)
    out.append(PageSpec("", title or "General", note, order, tuple(top)))
    return sorted((p for p in out if p.visible_fields), key=lambda p: p.order)


def all_fields() -> list[FieldSpec]:
    return [f for p in pages() for f in p.fields]
