"""Reading, checking and writing the settings file: the layer between the TOML on disk and the typed Settings.

Kept apart from ``config.py`` (the classes and their defaults) because what it does is different: turn msgspec's
errors into sentences naming the key, file and line; migrate an older layout; collect every problem for the Settings
dialog; and write atomically without ever overwriting a file that does not load (the person may be fixing it).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import math
import os
import re
import sys
import typing
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib
import tomli_w

from .config import THEMES, Settings, settings_path, url_problem
from .errors import SettingsError
from .private_files import make_private_dirs, open_private

_MSGSPEC_PATH = re.compile(r"^(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)


def validate_settings(data: Any, *, path: Path | None = None, source: str | None = None) -> Settings:
    """Turn parsed TOML into Settings, or raise SettingsError naming the key (and file and line if known)."""
    data = migrate_settings(data)
    try:
        settings = msgspec.convert(data, Settings)
    except msgspec.ValidationError as exc:
        m = _MSGSPEC_PATH.match(str(exc))
        what, keypath = (m.group("what"), m.group("path") or "") if m else (str(exc), "")
        keys = [k for k in re.findall(r"\.([A-Za-z0-9_\-]+)|\[\d+\]", keypath) if k]
        line = _find_line(source, keys) if source is not None else None
        detail = _plain(what, data, keys)
        raise SettingsError(path, f"{_key_name(keys)}: {detail}", line, tuple(keys), detail) from None
    for problem in _cross_field_errors(settings, path, source):
        raise problem
    return settings


def _cross_field_errors(settings: Settings, path: Path | None, source: str | None) -> list[SettingsError]:
    return [SettingsError(path, f"{_key_name(keys)}: {problem}", _find_line(source, keys) if source else None,
                          tuple(keys), problem) for keys, problem in _cross_field_problems(settings)]


def migrate_settings(data: Any) -> Any:
    """An older file's layout in today's: ``gui.theme`` (untyped) became ``[appearance] theme``. Returns a new dict;
    a value that is not a known theme stays where it was (nothing is lost, the window ignores it)."""
    if not isinstance(data, dict) or not isinstance(data.get("gui"), dict) or "theme" not in data["gui"]:
        return data
    gui = dict(data["gui"])
    appearance = data.get("appearance", {})
    if not isinstance(appearance, dict):
        return data  # a wrong [appearance] is reported by validation, as it is
    if "theme" not in appearance:
        if gui["theme"] not in THEMES:
            return data
        appearance = {**appearance, "theme": gui["theme"]}
    del gui["theme"]  # the typed value is the one in use from now on
    return {**data, "gui": gui, "appearance": appearance}


def settings_problems(data: dict[str, Any], fallback: Settings) -> list[SettingsError]:
    """Every problem ``validate_settings`` finds in ``data`` (not only the first): each one found is set aside by
    putting ``fallback``'s value in its place, and validation runs again. The Settings dialog shows each beside its
    field; an empty list means ``validate_settings(data)`` succeeds."""
    work = migrate_settings(dict(data))
    good = fallback.to_dict()
    found: list[SettingsError] = []
    while len(found) < 100:
        try:
            settings = msgspec.convert(work, Settings)
        except msgspec.ValidationError:  # a wrong type or range: validate_settings words it
            try:
                validate_settings(work)
            except SettingsError as exc:
                if any(f.keys == exc.keys for f in found):
                    return found
                found.append(exc)
                if not exc.keys:
                    return found
                work = _with_value(work, exc.keys, _value_at(good, exc.keys))
                continue
            return found  # not reached: what msgspec refuses, validate_settings refuses too
        return found + _cross_field_errors(settings, None, None)  # the rules tying fields together, all of them
    return found


def _value_at(data: Any, keys: tuple[str, ...]) -> Any:
    for k in keys:
        data = data.get(k) if isinstance(data, dict) else None
    return data


def _with_value(data: dict[str, Any], keys: tuple[str, ...], value: Any) -> dict[str, Any]:
    """A copy of ``data`` with ``value`` at ``keys`` (missing sections are made)."""
    head, *rest = keys
    inner = data.get(head)
    return {**data, head: _with_value(inner if isinstance(inner, dict) else {}, tuple(rest), value) if rest else value}


def _cross_field_problems(s: Settings) -> list[tuple[list[str], str]]:
    """Rules that tie fields together (the per-field ranges live in the annotations)."""
    out: list[tuple[list[str], str]] = []
    c = s.chunking
    if c.target_chars > c.max_chars:
        out.append((["chunking", "target_chars"],
                    f"target_chars ({c.target_chars}) must not be larger than max_chars ({c.max_chars})"))
    if c.overlap_chars * 2 > c.target_chars:
        out.append((["chunking", "overlap_chars"],
                    f"overlap_chars ({c.overlap_chars}) must be at most half of target_chars ({c.target_chars})"))
    if c.code_overlap_lines >= c.code_lines:
        out.append((["chunking", "code_overlap_lines"],
                    f"code_overlap_lines ({c.code_overlap_lines}) must be smaller than code_lines ({c.code_lines})"))
    for name in ("keyword_weight", "dense_weight"):
        if not math.isfinite(getattr(s.search, name)):
            out.append((["search", name], "must be a finite number"))
    if any(not p.strip() for p in s.ingest.extra_ignore):
        out.append((["ingest", "extra_ignore"], "patterns cannot be empty strings"))
    out += _url_field_problems(s)
    if s.db_url.strip():  # a shared library's address: a postgresql:// URL, never with a password in this file
        from .library_location import redacted
        from .library_location import url_problem as library_url_problem

        why = library_url_problem(s.db_url.strip(), in_settings=True)
        if why is not None:
            out.append((["db_url"], f"{redacted(s.db_url.strip())!r} cannot be used: {why}"))
    import pathspec  # only here: the CLI's start-up does not pay for it

    for pattern in s.ingest.extra_ignore:
        try:
            pathspec.GitIgnoreSpec.from_lines([pattern])
        except ValueError:
            out.append((["ingest", "extra_ignore"], f"{pattern!r} is not a valid pattern (.gitignore syntax)"))
    return out


def _url_field_problems(s: Settings) -> list[tuple[list[str], str]]:
    """Each model-server address in use (a field typed ``config.HttpUrl`` whose ``when`` hint holds) that
    ``url_problem`` refuses. An address not in use is not checked: a stale one must not stop the app."""
    out: list[tuple[list[str], str]] = []
    for keys, when, example in _url_fields():
        section: Any = s
        for k in keys[:-1]:
            section = getattr(section, k)
        if any(getattr(section, k, None) not in values for k, values in when.items()):
            continue
        url = getattr(section, keys[-1])
        why = url_problem(url)
        if why is not None:
            out.append((list(keys), f"{url!r} is not an http:// or https:// address ({why}; e.g. {example})"))
    return out


@functools.lru_cache(maxsize=1)
def _url_fields() -> tuple[tuple[tuple[str, ...], dict[str, list[Any]], str], ...]:
    """(keys, when, placeholder) of every field marked ``check="url"`` in config.py's annotations."""
    found = []
    for section in dataclasses.fields(Settings):
        cls: Any = typing.get_type_hints(Settings).get(section.name)
        if not dataclasses.is_dataclass(cls):
            continue
        for name, hint in typing.get_type_hints(cls, include_extras=True).items():
            hints: dict[str, Any] = {}
            for meta in typing.get_args(hint)[1:] if typing.get_origin(hint) is Annotated else ():
                if isinstance(meta, msgspec.Meta) and meta.extra:
                    hints.update(meta.extra)
            if hints.get("check") == "url":
                found.append(((section.name, name), dict(hints.get("when") or {}),
                              str(hints.get("placeholder") or "http://localhost:8080/v1")))
    return tuple(found)


_TYPE_WORDS = {"int": "a whole number", "float": "a number", "str": "text in quotes", "bool": "true or false",
               "array": "a list like [\"*.log\", \"drafts/\"]", "object": "a [section] of keys"}


def _plain(what: str, data: Any, keys: list[str]) -> str:
    """msgspec's "Expected `int`, got `str`" in words a person reads, with the offending value and choices."""
    value: Any = data
    for k in keys:
        value = value.get(k) if isinstance(value, dict) else None
    allowed = _choices(keys)
    if what.startswith("Invalid enum value") and allowed:
        return f"{value!r} is not one of {', '.join(map(repr, allowed))}"
    m = re.match(r"Expected `(\w+)`, got `\w+`$", what)
    if m:
        return f"expected {_TYPE_WORDS.get(m.group(1), m.group(1))}, got {value!r}"
    text = re.sub(r"`(\w+)`", lambda t: _TYPE_WORDS.get(t.group(1), t.group(1)), what)
    return text[:1].lower() + text[1:] + (f" (got {value!r})" if value is not None else "")


def _choices(keys: list[str]) -> tuple[Any, ...]:
    """The allowed values of a Literal-typed field, read from the dataclass annotations."""
    cls: Any = Settings
    hint: Any = None
    for k in keys:
        if not dataclasses.is_dataclass(cls):
            return ()
        hints = typing.get_type_hints(cls, include_extras=True)
        hint = hints.get(k)
        cls = hint
    while typing.get_origin(hint) is Annotated:
        hint = typing.get_args(hint)[0]
    return typing.get_args(hint) if typing.get_origin(hint) is Literal else ()


def _key_name(keys: list[str]) -> str:
    if not keys:
        return "the file"
    if len(keys) == 1:
        return keys[0]
    return f"[{'.'.join(keys[:-1])}] {keys[-1]}"


def _find_line(source: str | None, keys: list[str]) -> int | None:
    """The 1-based line of ``key`` inside its ``[section]`` in the TOML text (best effort, plain layouts)."""
    if not source or not keys:
        return None
    *sections, key = keys
    section = ".".join(sections)
    current = ""
    header = re.compile(r"^\s*\[\s*([^\]]+?)\s*\]\s*(#.*)?$")
    for number, raw in enumerate(source.splitlines(), start=1):
        m = header.match(raw)
        if m:
            current = m.group(1).strip().strip('"')
            if not sections and current == key:
                return number
            continue
        m = re.match(r"^\s*\"?([A-Za-z0-9_\-]+)\"?\s*=", raw)
        if m and m.group(1) == key and current == section:
            return number
        if m and not section and current == "" and m.group(1) == key:
            return number
    return None


def _drop_none(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _drop_none(v) for k, v in obj.items() if v is not None}
    if isinstance(obj, (list, tuple)):
        return [_drop_none(v) for v in obj]
    return obj


def load_settings(path: Path | None = None) -> Settings:
    """Read settings: a missing file gives defaults; a broken or invalid one raises SettingsError (never silently
    defaults: that would point the app at another database and later overwrite the person's file)."""
    path = path or settings_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Settings()
    except OSError as exc:
        raise SettingsError(path, f"it cannot be read ({exc.strerror or exc})") from None
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SettingsError(path, "it is not UTF-8 text", line) from None
    deep = _too_deep(source)
    if deep is not None:
        line, keys = deep
        raise SettingsError(path, f"{_key_name(keys) if keys else 'a value'}: it is nested more than {MAX_NESTING} "
                            "levels deep (arrays or tables inside each other)", line, tuple(keys)) from None
    try:
        data = tomllib.loads(source)
    except RecursionError:  # not reached past the guard above; a parser is never allowed to end the app
        raise SettingsError(path, "it is nested too deeply to read") from None
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc)) or "syntax error"
        raise SettingsError(path, f"it is not valid TOML: {msg}", int(m.group(1)) if m else None) from None
    return validate_settings(data, path=path, source=source)


MAX_NESTING = 32  # arrays/inline tables inside each other; the schema needs 2, tomllib recurses (~300 end it)


def _too_deep(source: str) -> tuple[int, list[str]] | None:
    """(line, key) where ``[``/``{`` nesting in a value first passes MAX_NESTING, else None: checked before
    tomllib (a recursive parser: a 5,000-deep array raised RecursionError in every command). Strings and comments
    are skipped; a table header (``[a.b]`` at the start of a line) names the section of the keys that follow."""
    depth, line, i, n = 0, 1, 0, len(source)
    section: list[str] = []
    key: list[str] = []
    line_start = 0
    while i < n:
        c = source[i]
        if c == "\n":
            line, line_start = line + 1, i + 1
        elif c == "#":
            end = source.find("\n", i)
            i = n if end < 0 else end
            continue
        elif c in "\"'":
            i, line = _skip_string(source, i, line)
            continue
        elif depth == 0 and c == "[" and not source[line_start:i].strip():
            end = source.find("\n", i)
            header = source[i:n if end < 0 else end]
            section = [k.strip().strip("\"'") for k in header.split("#")[0].strip("[] \t\r").split(".")]
            i = n if end < 0 else end
            continue
        elif depth == 0 and c == "=":
            key = section + [k.strip().strip("\"'") for k in source[line_start:i].split(".")]
        elif c in "[{":
            depth += 1
            if depth > MAX_NESTING:
                return line, key
        elif c in "]}":
            depth = max(0, depth - 1)
        i += 1
    return None


def _skip_string(source: str, i: int, line: int) -> tuple[int, int]:
    """The index just past the TOML string starting at ``i`` (basic, literal, either multi-line), and the line
    number there. An unterminated string ends at the end of its line (tomllib reports it)."""
    quote = source[i]
    triple = source.startswith(quote * 3, i)
    j = i + (3 if triple else 1)
    while j < len(source):
        c = source[j]
        if c == "\\" and quote == '"':
            j += 2
            continue
        if c == "\n":
            if not triple:
                return j, line
            line += 1
        if triple and source.startswith(quote * 3, j):
            return j + 3, line
        if not triple and c == quote:
            return j + 1, line
        j += 1
    return j, line


def check_settings_file(path: Path | None = None) -> SettingsError | None:
    """The problem with the settings file as it is on disk, or None when it is fine (or absent)."""
    try:
        load_settings(path)
    except SettingsError as exc:
        return exc
    return None


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    """Write atomically (temp file + rename) so a crash never leaves a half-written config.

    A file on disk that does not load is never overwritten (the person may be fixing it by hand): SettingsError."""
    path = path or settings_path()
    problem = check_settings_file(path)
    if problem is not None:
        raise problem
    validate_settings(_drop_none(settings.to_dict()))  # never write a file that would not load back
    make_private_dirs(path.parent)  # owner-only: 0700 folder, 0600 file whatever the umask (private_files.py)
    tmp = path.with_suffix(".toml.tmp")
    with open_private(tmp, "wb") as fh:
        tomli_w.dump(_drop_none(settings.to_dict()), fh)
    os.replace(tmp, path)
    return path


def reset_settings(path: Path | None = None) -> Path | None:
    """Move the settings file aside as ``settings.toml.broken-YYYYMMDD-HHMMSS`` (defaults apply from now on).

    Returns the backup's path, or None when there was no file."""
    path = path or settings_path()
    if not path.exists():
        return None
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    backup = path.with_name(f"{path.name}.broken-{stamp}")
    n = 1
    while backup.exists():
        n += 1
        backup = path.with_name(f"{path.name}.broken-{stamp}-{n}")
    os.replace(path, backup)
    return backup


