"""Talking to the desktop: open a file (at its place), reveal it in the file manager, the clipboard.

Never through a shell: files open with QDesktopServices (the OS's own association), and commands (the
"open with" setting, "reveal") start with an argument list (QProcess.startDetached), so no path is ever
interpreted by a shell. Tests replace ``open_path``/``reveal_path``/``start_detached`` with fakes.

Open at the place: a text/Markdown/code hit opens at its line in an editor, a PDF at its page in a viewer, with
the person's own command (``[desktop] open_with`` / ``open_pdf_with``: ``{path}``, ``{line}``, ``{page}``) or
the first known editor/viewer found on PATH; anything else (or a failure) falls back to the default app.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys

from PySide6.QtCore import QProcess, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication

# Known commands that take a place, tried in order when the setting is empty (first one found on PATH wins).
TEXT_OPENERS = (
    "code --goto {path}:{line}",
    "codium --goto {path}:{line}",
    "subl {path}:{line}",
    "kate --line {line} {path}",
    "gedit +{line} {path}",
)
PDF_OPENERS = (
    "okular --page {page} {path}",
    "evince --page-index={page} {path}",
    "zathura --page={page} {path}",
    "SumatraPDF -page {page} {path}",
)


def open_path(path: str) -> bool:
    """Open with the system's default application. False when nothing could open it."""
    return QDesktopServices.openUrl(QUrl.fromLocalFile(path))


def start_detached(program: str, args: list[str]) -> bool:
    return bool(QProcess.startDetached(program, [*args])[0])  # an argument list: never a shell


def command_args(command: str, path: str, line: int | None = None, page: int | None = None) -> list[str] | None:
    """``command`` split like a shell would (quotes kept together; nothing is ever run by a shell) with the
    placeholders filled in each argument. None when the command is empty or malformed. A command without
    ``{path}`` gets the path appended."""
    try:
        parts = shlex.split(command, posix=not sys.platform.startswith("win"))
    except ValueError:
        return None
    if not parts:
        return None
    values = {"path": path, "line": str(line or 1), "page": str(page or 1)}
    out = []
    for part in parts:
        arg = part
        for k, v in values.items():
            arg = arg.replace("{" + k + "}", v)
        out.append(arg)
    if not any("{path}" in p for p in parts):
        out.append(path)
    return out


def default_command(kind: str) -> str:
    """The first known place-aware editor/viewer on PATH for this kind of file ('' = none: default app)."""
    for cmd in PDF_OPENERS if kind == "pdf" else TEXT_OPENERS:
        if shutil.which(cmd.split()[0]):
            return cmd
    return ""


def open_at(path: str, kind: str, line: int | None = None, page: int | None = None, command: str = "") -> str:
    """Open ``path`` at its line/page. Returns how: "command" (the given or a default command ran),
    "default" (the system's default app), or "" (nothing could open it)."""
    cmd = command.strip() or default_command(kind)
    if cmd and (line is not None or page is not None or command.strip()):
        args = command_args(cmd, path, line, page)
        if args and start_detached(args[0], args[1:]):
            return "command"
    return "default" if open_path(path) else ""


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
