"""API keys for model servers, kept out of ``settings.toml`` (a file people paste into bug reports and sync).

Where a key lives, in the order it is read:

1. an environment variable (``DESKTOP_MEMORY_EMBEDDER_API_KEY``, ``DESKTOP_MEMORY_RERANK_API_KEY``): for an MCP
   client's config or a script, never written anywhere by the app;
2. the platform keyring (macOS Keychain, Windows Credential Locker, the Secret Service on Linux desktops), when the
   optional ``keyring`` package is installed and has a working backend (``pip install '.[keyring]'`` in a checkout;
   the bundle does not carry it, see docs/PACKAGING.md);
3. else ``api-keys.json`` beside the settings file, created owner-only (0600) from the start (private_files.py).

A key is never logged, never put in an error message, and never shown back: callers get "set"/"not set" and where
it is kept. ``DESKTOP_MEMORY_NO_KEYRING=1`` skips the keyring (tests; a desktop whose keyring prompts at every
start).
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Any, Literal

from .config import char_name, config_dir
from .errors import ApiKeyError, UserError
from .private_files import make_private_dirs, open_private

# "database": the password of a shared PostgreSQL library (docs/SHARED.md), when not in PGPASSWORD or ~/.pgpass
KeyName = Literal["embedder", "rerank", "database"]
KEY_NAMES: tuple[KeyName, ...] = ("embedder", "rerank", "database")
SERVICE = "desktop-memory"  # the keyring's service name
KEY_FILE = "api-keys.json"
ENV_NO_KEYRING = "DESKTOP_MEMORY_NO_KEYRING"
_LOCK = threading.Lock()
_GENERATION = [0]  # bumped by every set/clear: clients holding a key read it again (a key changed in Settings)


def generation() -> int:
    return _GENERATION[0]


def env_var(name: KeyName) -> str:
    return f"DESKTOP_MEMORY_{name.upper()}_API_KEY"


def key_file() -> Path:
    return config_dir() / KEY_FILE


def _keyring() -> Any | None:
    """The ``keyring`` module when it is installed, allowed and has a real backend; else None (use the file)."""
    if os.environ.get(ENV_NO_KEYRING):
        return None
    try:
        import keyring
        from keyring.backends import fail
    except Exception:  # not installed, or a broken install: the file is the fallback
        return None
    try:
        backend = keyring.get_keyring()
    except Exception:
        return None
    if isinstance(backend, fail.Keyring) or type(backend).__module__.startswith("keyring.backends.null"):
        return None
    return keyring


def _read_file() -> dict[str, str]:
    try:
        data = json.loads(key_file().read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, RecursionError) as exc:
        raise UserError(f"The API key file {key_file()} cannot be read ({type(exc).__name__}): "
                        "delete it and set the key again.") from None
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(data, dict) \
        else {}


def _write_file(keys: dict[str, str]) -> None:
    path = key_file()
    if not keys:
        path.unlink(missing_ok=True)
        return
    make_private_dirs(path.parent)
    tmp = path.with_suffix(".json.tmp")
    with open_private(tmp, "w", encoding="utf-8") as fh:
        json.dump(keys, fh)
    os.replace(tmp, path)


MAX_KEY_CHARS = 4096


def key_problem(value: str) -> str | None:
    """Why ``value`` (already stripped of surrounding white space) cannot be an API key, or None. An HTTP header
    carries ASCII only: a pasted zero-width space made every hybrid search end in UnicodeEncodeError. Never quotes
    the key: only the position and the kind of character."""
    lines = [part for part in value.splitlines() if part.strip()]
    if len(lines) > 1:
        return f"it has {len(lines)} lines (a key is one line: paste only the key)"
    if len(value) > MAX_KEY_CHARS:
        return f"it is longer than {MAX_KEY_CHARS:,} characters"
    for pos, c in enumerate(value, start=1):
        if not c.isascii() or not c.isprintable() or c.isspace():
            kind = "a space" if c == " " else char_name(c)
            return f"character {pos} of {len(value)} is {kind} (keys are plain ASCII: type or paste it again)"
    return None


def get_key(name: KeyName) -> str:
    """The key for ``name`` ("" when none is set anywhere); ApiKeyError when the one found cannot be sent (an
    environment variable or a key stored by an older version: they were not checked where they entered)."""
    value = os.environ.get(env_var(name), "").strip()
    if value:
        return _checked(value, f"the environment variable {env_var(name)}")
    kr = _keyring()
    if kr is not None:
        try:
            value = kr.get_password(SERVICE, name) or ""
        except Exception:  # a locked or broken keyring: try the file
            value = ""
        if value:
            return _checked(value.strip(), "the system keyring")
    with _LOCK:
        return _checked(_read_file().get(name, "").strip(), str(key_file()))


def _checked(value: str, where: str) -> str:
    problem = key_problem(value) if value else None
    if problem is not None:
        raise ApiKeyError(f"The API key in {where} cannot be used: {problem}.")
    return value


def set_key(name: KeyName, value: str) -> str:
    """Store (or, with an empty value, forget) the key; returns where it is kept, in words."""
    value = value.strip()
    problem = key_problem(value) if value else None
    if problem is not None:  # refused before anything changes: the key stored before stays
        raise ApiKeyError(f"That {name} API key was not saved: {problem}.")
    _GENERATION[0] += 1
    if not value:
        clear_key(name)
        return "nowhere (cleared)"
    kr = _keyring()
    if kr is not None:
        try:
            kr.set_password(SERVICE, name, value)
        except Exception:
            pass
        else:
            with _LOCK:  # one place only: drop a copy an earlier run left in the file
                keys = _read_file()
                if keys.pop(name, None) is not None:
                    _write_file(keys)
            return "the system keyring"
    with _LOCK:
        keys = _read_file()
        keys[name] = value
        _write_file(keys)
    return f"{key_file()} (owner-only)"


def clear_key(name: KeyName) -> None:
    _GENERATION[0] += 1
    kr = _keyring()
    if kr is not None:
        try:
            kr.delete_password(SERVICE, name)
        except Exception:  # not there, or no keyring after all
            pass
    with _LOCK:
        keys = _read_file()
        if keys.pop(name, None) is not None:
            _write_file(keys)


def key_status(name: KeyName) -> str:
    """"set (environment variable …)", "set (system keyring)", "set (file …)" or "not set": never the key. A key
    that cannot be sent says so ("set (…) but unusable: character 3 of 40 is …")."""
    found: tuple[str, str] | None = None
    value = os.environ.get(env_var(name), "").strip()
    if value:
        found = (value, f"environment variable {env_var(name)}")
    kr = _keyring() if found is None else None
    if kr is not None:
        try:
            value = (kr.get_password(SERVICE, name) or "").strip()
        except Exception:
            value = ""
        if value:
            found = (value, "system keyring")
    if found is None:
        with _LOCK:
            value = _read_file().get(name, "").strip()
        if value:
            found = (value, str(key_file()))
    if found is None:
        return "not set"
    problem = key_problem(found[0])
    return f"set ({found[1]})" + (f" but unusable: {problem}" if problem else "")


def redact(text: str, key: str) -> str:
    """``text`` with every occurrence of ``key`` masked, in any letter case (a server that echoes the Authorization
    header back, or upper-cases it: ``SK-LEAK…``)."""
    if not key or len(key) < 4:
        return text
    return re.sub(re.escape(key), "•••", text, flags=re.IGNORECASE)
