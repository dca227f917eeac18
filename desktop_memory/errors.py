"""Errors a person can act on (UserError) versus bugs (everything else): every error class of the app is here.

The GUI, CLI and MCP server show a UserError's message as-is, without a traceback; anything else is a bug. When a
front end needs to tell cases apart (a busy database, a damaged one), it looks at the class, not the words. The only
exceptions defined elsewhere are private signals that never leave their package (the HTTP retry loop's
``RequestFailed``/``BodyTooLarge``, the office readers' ``DocumentProblem``, the instance socket's ``BadRequest``):
each is caught beside where it is raised and turned into one of these.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal


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


class DatabaseDamaged(StoreDamaged):
    """The file is a desktop-memory database whose schema is broken (a table or column missing, a bad version)."""

    def __init__(self, path: Path, problems: list[str]) -> None:
        backups = sorted(path.parent.glob(f"{path.name}.bak-v*")) if str(path) not in ("", ":memory:") else []
        restore = (f"restore the backup {backups[-1]}" if backups
                   else "restore it from a backup, or move it aside and index your folders again")
        super().__init__(
            f"The database {path} is damaged: {'; '.join(problems)}. Run `desktop-memory check` for details, "
            f"or {restore}. Nothing was changed.", problems=problems, advice=f"{restore}. Nothing was changed."
        )


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


class OpenAIModelMissing(EmbedderError):
    """The OpenAI-compatible server is up but does not serve the configured model."""


# how a model server failed (ServerError.kind): the caller words the advice
Failure = Literal["connect", "timeout", "dropped", "status", "auth", "model", "too_large", "no_route", "rejected",
                  "bad_reply", "too_big"]


class ServerError(EmbedderError):
    """A model server failed; ``kind`` says how (the caller adds advice), ``status`` is the HTTP status if any."""

    def __init__(self, message: str, kind: Failure, status: int | None = None) -> None:
        super().__init__(message)
        self.kind: Failure = kind
        self.status = status


class ApiKeyError(EmbedderError):
    """A key that cannot be sent (non-ASCII, a control character, several lines): the message names where it is
    kept and the position and kind of the bad character, never the key."""


class RerankError(EmbedderError):
    """The reranker could not order these passages (the caller keeps the fused order)."""


class LibraryMissing(UserError):
    """No database at the configured path yet (the MCP server says how to make one)."""


class OutsideLibrary(UserError):
    """A path that is not a folder (or a file inside a folder) of the library, or reaches outside one."""


class UsageError(UserError):
    """Bad usage the parser cannot see (a path that does not exist): exit 2, like argparse's own errors."""


class Cancelled(Exception):
    """Raised inside long work when the user pressed Cancel."""
