"""Turning exceptions into sentences for banners and the status bar (shared by the window and its controllers)."""

from __future__ import annotations

import logging

from PySide6.QtWidgets import QStatusBar, QWidget

from ..errors import EmbedderError, UserError
from ..service_api import MemoryApi
from .banner import BannerArea

log = logging.getLogger(__name__)


def error_text(exc: BaseException) -> str:
    """A UserError's message as-is; anything else is a bug: a short, honest sentence."""
    if isinstance(exc, UserError):
        return str(exc)
    return f"Something went wrong ({type(exc).__name__}: {exc}). Details are in the log."


def search_error_text(exc: BaseException, tb: str) -> str:
    """What the results area says when a search failed (a bug is logged with its traceback)."""
    if not isinstance(exc, UserError):
        log.error("search failed:\n%s", tb)
    msg = error_text(exc)
    if isinstance(exc, EmbedderError):
        msg += " Switch to Hybrid or Keyword search, or fix the embedder in Settings."
    return msg


def show_open_notices(banners: BannerArea, svc: MemoryApi) -> None:
    """Said once when a library opens: read-only (search still works), and notices such as "made owner-only"."""
    if svc.read_only_note:  # read-only file/media or a full disk
        banners.show_message(svc.read_only_note, "warning", key="read-only")
    for notice in svc.take_notices():  # e.g. the library made owner-only (private_files.py)
        banners.show_message(notice, "info", key="privacy")


def make_room_for_messages(status: QStatusBar, *yielding: QWidget) -> None:
    """While the status bar shows a transient message ("Copied 6 passages (987 tokens) to the clipboard: …"), the
    ``yielding`` permanent widgets step aside so the message is not cut; they come back when it ends."""
    hidden: list[QWidget] = []

    def changed(message: str) -> None:
        if message:
            for w in yielding:
                if w.isVisible():
                    w.hide()
                    hidden.append(w)
        else:
            while hidden:
                hidden.pop().show()

    status.messageChanged.connect(changed)
