"""Where a library lives: a SQLite file (a path) or a shared PostgreSQL database (a ``postgresql://`` URL).

Low-level on purpose (config.py, the CLI and the service use it; it imports nothing of the app): it tells a URL
from a path, checks a URL before anything connects, and redacts it for every message. A URL is handed to libpq
unchanged, so whatever libpq understands in it (``sslmode=verify-full``, ``sslrootcert``, ``service=``, a Unix
socket ``host=``) is honoured as written; the only thing refused is a password written where it would be kept in
the settings file — it belongs in the environment (PGPASSWORD), the API-key store (keyring or owner-only file,
``desktop-memory api-key set`` under the server's name) or libpq's own ``~/.pgpass`` / service file.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

from .errors import UserError

SCHEMES = ("postgresql", "postgres")
ENV_DB = "DESKTOP_MEMORY_DB"  # a path or a postgresql:// URL, between --db and the settings file
MAX_URL_CHARS = 2048
PASSWORD_HOME = ("the PGPASSWORD environment variable, libpq's ~/.pgpass or service file, or the API-key store "
                 "(desktop-memory api-key set)")

Location = str | Path  # a Path: a SQLite file; a str: a postgresql:// URL (is_server_url says which)


class BadLocation(UserError, ValueError):
    """A library address that cannot be used (one sentence, the URL redacted)."""


def is_server_url(text: str | Path) -> bool:
    """True for ``postgresql://…`` / ``postgres://…`` (any case); a Path is never a URL."""
    if isinstance(text, Path):
        return False
    head, sep, _ = text.strip().partition("://")
    return bool(sep) and head.lower() in SCHEMES


def redacted(url: str) -> str:
    """The URL as a message may show it: a password (in the user part or as ``password=``) becomes ``***``."""
    if not has_password(url):
        return url
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if parts.password is not None:  # an empty one stays empty: "***" would suggest one was given
            user, _, host = netloc.rpartition("@")
            netloc = f"{user.partition(':')[0]}{':***' if parts.password else ''}@{host}"
        query = "&".join(f"{k}=***" if k.lower() == "password" else f"{k}={v}"
                         for k, v in parse_qsl(parts.query, keep_blank_values=True))
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:
        return "(a postgresql:// URL that does not parse)"


def split_password(url: str) -> tuple[str, str | None]:
    """(``url`` without its password, the password or None): for a URL given on the command line, whose password
    goes to this process's PGPASSWORD while the rest may be shown and kept like any library address."""
    if not has_password(url):
        return url, None
    parts = urlsplit(url)
    password = unquote(parts.password) if parts.password is not None else None
    netloc = parts.netloc
    if parts.password is not None:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}@{host}"
    kept = []
    for pair in parts.query.split("&") if parts.query else []:
        key, _, value = pair.partition("=")
        if unquote(key).lower() == "password":
            password = unquote(value.replace("+", " "))
        else:
            kept.append(pair)
    return urlunsplit((parts.scheme, netloc, parts.path, "&".join(kept), parts.fragment)), password or None


def has_password(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.password is not None or any(k.lower() == "password" for k, _ in parse_qsl(parts.query))


def url_problem(url: str, *, in_settings: bool = False) -> str | None:
    """Why ``url`` cannot name a shared library (a sentence fragment for "… is not a library address: <why>"), or
    None. ``in_settings``: the value would be saved in settings.toml, where a password is refused."""
    if len(url) > MAX_URL_CHARS:
        return f"it is longer than {MAX_URL_CHARS:,} characters"
    bad = next((c for c in url if c.isspace() or not c.isprintable()), None)
    if bad is not None:
        return "it contains a space or an invisible character"
    if not is_server_url(url):
        return "it must start with postgresql://"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError as exc:
        return f"it does not parse: {exc}"
    query = dict(parse_qsl(parts.query))
    if not parts.path.strip("/") and "dbname" not in query and "service" not in query:
        return "it names no database (postgresql://user@host/dbname)"
    if in_settings and has_password(url):
        return f"a password is never kept in the settings file; put it in {PASSWORD_HOME}"
    return None


def parse_location(value: str | Path, *, in_settings: bool = False) -> Location:
    """A ``--db`` / environment / settings value as a location: a checked URL (str) or an expanded Path.
    Raises BadLocation (a UserError) with one sentence for a URL that cannot be used."""
    if isinstance(value, Path):
        return value.expanduser()
    text = value.strip()
    if is_server_url(text):
        why = url_problem(text, in_settings=in_settings)
        if why:
            raise BadLocation(f"{redacted(text)} is not a usable library address: {why}.")
        return text
    scheme, sep, _ = text.partition("://")
    if sep and len(scheme) > 1 and scheme.isalnum():
        raise BadLocation(f"{scheme}:// is not a library address: give a database file or a postgresql:// URL.")
    return Path(text).expanduser()


def env_location() -> Location | None:
    """``DESKTOP_MEMORY_DB`` when set (a path or a URL; a password in it is fine: the environment is private)."""
    value = os.environ.get(ENV_DB, "").strip()
    return parse_location(value) if value else None


def shown(location: Location) -> str:
    """How a message names a library: the path, or the URL without its password."""
    return redacted(location) if isinstance(location, str) and is_server_url(location) else str(location)


def schema_backups(location: Location) -> list[Path]:
    """The copies a SQLite library's schema upgrades left beside it (``<name>.bak-v<N>``); none for a server."""
    if not isinstance(location, Path):
        return []
    return sorted(location.parent.glob(f"{location.name}.bak-v*")) if location.parent.is_dir() else []
