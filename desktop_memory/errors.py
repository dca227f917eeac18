"""Errors a person can act on (UserError) versus bugs (everything else): every error class of the app is here.

The GUI, CLI and MCP server show a UserError's message as-is, without a traceback; anything else is a bug. When a
front end needs to tell cases apart (a busy database, a damaged one), it looks at the class, not the words.
"""

from __future__ import annotations

from pathlib import Path


class UserError(Exception):
    """Something the user can fix: bad file, server down, locked/corrupt/newer database."""


class StoreError(UserError):
    """The database cannot be opened or used (missing extension, newer schema, locked, read-only, disk full).

    Front ends tell the cases apart by class (below), never by the message's words."""


class StoreBusy(StoreError):
    """Another process holds the database locked longer than the busy timeout: trying again later works."""


class StoreFull(StoreError):
    """The disk holding the database is full: reading works, writing waits for free space."""


class StoreReadOnly(StoreError):
    """The database file or its location cannot be written: searching works, indexing and changes are off."""


class StoreDamaged(StoreError):
    """The file is corrupt, or its schema is broken. ``problems`` lists what is wrong (when known); ``advice``
    is the one sentence saying what to do about it."""

    def __init__(self, message: str, *, problems: list[str] | None = None, advice: str = "") -> None:
        super().__init__(message)
        self.problems = list(problems or [])
        self.advice = advice


class NotOurDatabase(StoreError):
    """The file is not a desktop-memory database (another program's SQLite file, or not SQLite at all): it is
    never modified."""


class SettingsError(UserError):
    """The settings file cannot be used as it is. ``path`` and ``line`` say where; ``problem`` says what."""

    def __init__(self, path: Path | None, problem: str, line: int | None = None,
                 keys: tuple[str, ...] = (), detail: str = "") -> None:
        self.path = path
        self.problem = problem
        self.line = line
        self.keys = keys  # the field's place (("chunking", "overlap_chars")): the Settings dialog shows it there
        self.detail = detail or problem  # the problem without the key's name, for a message beside the field
        where = f"{path}" + (f", line {line}" if line else "") if path else "settings"
        super().__init__(
            f"The settings file {where} has a problem: {problem}.\n"
            "  Fix it in a text editor, or reset it to the defaults with `desktop-memory settings --reset` "
            "(the broken file is kept beside it as a dated backup). Nothing was changed."
        )


class ExtractionError(UserError):
    """A file could not be turned into text; the message says why in plain words."""

    def __init__(self, reason: str, *, status: str = "failed") -> None:
        super().__init__(reason)
        self.reason = reason
        # "failed" (corrupt, unreadable) or "skipped" (by policy: binary, too big, no text layer, encrypted)
        self.status = status


class EmbedderError(UserError):
    """The embedder cannot produce vectors: server down, model missing, wrong dimension, bad model dir."""


class OllamaModelMissing(EmbedderError):
    """The Ollama server is up but does not have the configured model (the fix is ``ollama pull``)."""


class LibraryMissing(UserError):
    """No database at the configured path yet (the MCP server says how to make one)."""


class Cancelled(Exception):
    """Raised inside long work when the user pressed Cancel."""
