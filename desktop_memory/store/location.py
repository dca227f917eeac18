"""Where a library lives: a SQLite file path, or a PostgreSQL server named by a ``postgresql://`` URL.

Pure text rules (no driver import): the front ends ask ``is_server_url`` to decide what ``--db`` names, and every
message that shows a server URL shows ``redacted(url)`` so a password typed into the URL never reaches a log.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

SERVER_SCHEMES = ("postgresql://", "postgres://")


def is_server_url(text: str) -> bool:
    """Whether ``text`` names a PostgreSQL library (``postgresql://…`` or ``postgres://…``) rather than a file."""
    return text.strip().lower().startswith(SERVER_SCHEMES)


def redacted(url: str) -> str:
    """The URL with any password removed (``postgresql://ann:***@host/db``), for messages and logs.

    A ``password=`` query parameter (libpq accepts one) is masked too."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "postgresql://…"
    netloc = parts.netloc
    if "@" in netloc:
        user_part, host_part = netloc.rsplit("@", 1)
        if ":" in user_part:  # an empty password stays empty: "***" would suggest one was given
            name, secret = user_part.split(":", 1)
            user_part = f"{name}:***" if secret else name
        netloc = f"{user_part}@{host_part}"
    query = "&".join(
        (p.split("=", 1)[0] + "=***") if p.split("=", 1)[0].lower() == "password" else p
        for p in parts.query.split("&")
    ) if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
