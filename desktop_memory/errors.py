"""Errors a person can act on (UserError) versus bugs (everything else).

The GUI and CLI show a UserError's message as-is, without a traceback; anything else is a bug.
"""


class UserError(Exception):
    """Something the user can fix: bad file, server down, locked/corrupt/newer database."""


class StoreError(UserError):
    """The database cannot be opened or used (missing extension, newer schema, locked, read-only, disk full)."""


class ExtractionError(UserError):
    """A file could not be turned into text; the message says why in plain words."""

    def __init__(self, reason: str, *, status: str = "failed") -> None:
        super().__init__(reason)
        self.reason = reason
        # "failed" (corrupt, unreadable) or "skipped" (by policy: binary, too big, no text layer, encrypted)
        self.status = status


class EmbedderError(UserError):
    """The embedder cannot produce vectors: server down, model missing, wrong dimension, bad model dir."""


class Cancelled(Exception):
    """Raised inside long work when the user pressed Cancel."""
