"""``desktop-memory paths``: where everything lives, from the code that puts it there (no path is spelt twice).

What a person needs to find, back up or delete: the settings file (and any broken one moved aside), the API-key
file and the keyring entries, the data folder with the database, its WAL files and migration backups, the logs,
the caches (the model check, what rerank servers want), and the running app's single-instance socket. Works with a
broken settings file too (that is when a person looks for it), and creates nothing: the socket's folder is named,
not made.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from ..app_dirs import GUI_LOG, MODEL_CHECK_FILE, RERANK_SERVERS_FILE, log_dir
from ..config import ENV_CONFIG_DIR, ENV_DATA_DIR, config_dir, data_dir, default_db_path, settings_path
from ..errors import SettingsError
from ..library_location import Location, parse_location, shown


def _entry(what: str, path: Path | str | None, **extra: Any) -> dict[str, Any]:
    exists = path is not None and os.path.lexists(path)
    return {"what": what, "path": str(path) if path is not None else None, "exists": exists, **extra}


def settings_db_file() -> Path:
    """The database file the settings name (shown beside a server library: what the app would use without it)."""
    from ..settings_file import load_settings

    try:
        return load_settings().resolved_db_path()
    except SettingsError:
        return default_db_path()


def locations(db_arg: str | None) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Every place the app reads or writes, keyed by a stable name, and notes (overrides, a broken settings file)."""
    from ..api_keys import KEY_NAMES, SERVICE, env_var, key_file, key_status
    from ..instance_endpoint import endpoint
    from ..machine import machine_id_path
    from ..settings_file import load_settings

    notes: list[str] = []
    configured: Location
    try:
        configured = load_settings().resolved_db_location()
    except SettingsError as exc:
        configured = default_db_path()
        notes.append(f"the settings file has a problem{'' if db_arg else ', so the default database is shown'}: "
                     f"{exc}")
    found = parse_location(db_arg) if db_arg else configured
    server = None if isinstance(found, Path) else shown(found)  # a shared library: no file here (docs/SHARED.md)
    db = (found if isinstance(found, Path) else settings_db_file()).absolute()
    settings = settings_path()
    broken = sorted(str(p) for p in settings.parent.glob(f"{settings.name}.broken-*")) if settings.parent.is_dir() \
        else []
    backups = sorted(str(p) for p in db.parent.glob(f"{db.name}.bak-v*")) if db.parent.is_dir() else []
    socket = endpoint(db, create=False)
    out = {
        "config_folder": _entry("config folder", config_dir()),
        "settings": _entry("settings file", settings, set_aside=broken),
        "api_keys": _entry("API-key file (when no keyring)", key_file()),
        "keyring": {"what": "keyring entries", "service": SERVICE, "entries": list(KEY_NAMES),
                    "status": {name: key_status(name) for name in KEY_NAMES},
                    "environment": [env_var(name) for name in KEY_NAMES]},
        "machine_id": _entry("this machine's id (shared libraries)", machine_id_path()),
        "data_folder": _entry("data folder", data_dir()),
        "database": _entry("database", db, wal=[f"{db}-wal", f"{db}-shm"], backups=backups) if server is None
        else {"what": "database (a shared library on a server)", "path": server, "exists": True},
        "logs": _entry("logs (the window's)", log_dir(), files=[GUI_LOG, f"{GUI_LOG}.1", f"{GUI_LOG}.2"]),
        "cache": _entry("model-check cache", data_dir() / MODEL_CHECK_FILE),
        "rerank_cache": _entry("what rerank servers turned out to want", data_dir() / RERANK_SERVERS_FILE),
        "socket": _entry("single-instance socket (while the app runs)", socket),
    }
    for var in (ENV_CONFIG_DIR, ENV_DATA_DIR):
        if os.environ.get(var):
            notes.append(f"{var} is set: {os.environ[var]}")
    return out, notes


def paths(args: argparse.Namespace) -> int:
    found, notes = locations(args.db)
    if args.json:
        print(json.dumps({**found, "notes": notes}, indent=2, ensure_ascii=False))
        return 0
    for entry in found.values():
        if "path" not in entry:  # the keyring: names, not a path
            kept = ", ".join(f"{n} {s}" for n, s in entry["status"].items())
            print(f"{entry['what']:<44} service {entry['service']!r}: {kept}")
            continue
        state = "" if entry["exists"] else "  (not there yet)"
        print(f"{entry['what']:<44} {entry['path'] or '(none: no private folder for it)'}{state}")
        for extra in entry.get("set_aside", []) + entry.get("backups", []):
            print(f"{'':<44} {extra}")
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return 0
