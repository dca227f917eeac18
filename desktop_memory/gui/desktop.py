"""Talking to the desktop: open a file in its default app, reveal it in the file manager, the clipboard.

Never through a shell: files open with QDesktopServices (the OS's own association), and "reveal" starts the
file manager with an argument list (QProcess.startDetached), so no path is ever interpreted by a shell.
Tests replace ``open_path``/``reveal_path`` with fakes.
"""

from __future__ import annotations

import os
import sys

from PySide6.QtCore import QProcess, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication


def open_path(path: str) -> bool:
    """Open with the system's default application. False when nothing could open it."""
    return QDesktopServices.openUrl(QUrl.fromLocalFile(path))


def reveal_path(path: str) -> bool:
    """Show the file selected in the file manager (Windows/macOS), or open its folder (Linux)."""
    path = os.path.abspath(path)
    if sys.platform.startswith("win"):
        return QProcess.startDetached("explorer.exe", ["/select," + os.path.normpath(path)])[0]
    if sys.platform == "darwin":
        return QProcess.startDetached("open", ["-R", path])[0]
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    return QDesktopServices.openUrl(QUrl.fromLocalFile(folder))


def copy_text(text: str) -> None:
    QGuiApplication.clipboard().setText(text)
