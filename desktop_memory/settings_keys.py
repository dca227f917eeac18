"""Keys of the settings file that no setting reads: said by `desktop-memory settings` (kept beside
settings_file.py, which reads and checks the values)."""

from __future__ import annotations

import dataclasses
import difflib
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from .config import Settings, settings_path
from .settings_file import _find_line, _key_name, migrate_settings


def unknown_settings(path: Path | None = None) -> list[str]:
    """Keys of a settings file that loads but that no setting reads (``url`` for ``openai_url``): each as one
    sentence with its line and the nearest real keys. Not an error (a newer version's file still loads), but said
    by ``desktop-memory settings``, since a mistyped key otherwise leaves its setting at the default in silence."""
    path = path or settings_path()
    try:
        source = path.read_text(encoding="utf-8")
        data = migrate_settings(tomllib.loads(source))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return []  # load_settings says what is wrong with it
    defaults = Settings()
    out: list[str] = []
    for key, value in data.items() if isinstance(data, dict) else ():
        section = getattr(defaults, key, None) if key in {f.name for f in dataclasses.fields(Settings)} else None
        if section is None:
            found, names = [key], [f.name for f in dataclasses.fields(Settings)]
        elif isinstance(value, dict) and dataclasses.is_dataclass(section):
            names = [f.name for f in dataclasses.fields(section)]
            for inner in value:
                if inner not in names:
                    out.append(_unknown(source, [key, inner], names))
            continue
        else:
            continue
        out.append(_unknown(source, found, names))
    return out


def _unknown(source: str, keys: list[str], names: list[str]) -> str:
    near = [n for n in names if keys[-1] in n][:3] or difflib.get_close_matches(keys[-1], names, n=1, cutoff=0.6)
    line = _find_line(source, keys)
    return (f"{_key_name(keys)}{f' (line {line})' if line else ''} is not a setting and is ignored"
            + (f": did you mean {' or '.join(near)}?" if near else "."))
