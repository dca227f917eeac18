"""Turning exceptions into sentences for banners and the status bar (shared by the window and its controllers)."""

from __future__ import annotations

from ..errors import UserError


def error_text(exc: BaseException) -> str:
    """A UserError's message as-is; anything else is a bug: a short, honest sentence."""
    if isinstance(exc, UserError):
        return str(exc)
    return f"Something went wrong ({type(exc).__name__}: {exc}). Details are in the log."
