"""`desktop-memory-gui --smoke`: the core self-check, then the real main window, offscreen when there is no display.

Checks, printing each: everything ``desktop_memory.smoke.run_smoke`` checks (store, sqlite-vec, model, one search);
then Qt starts (platform plugin named), the app icon (SVG) and the stylesheet load, and the real ``MainWindow``
opens a temporary library, loads the model, indexes a note and a PDF (the PDF through the helper process, which a
frozen app starts from its own executable), answers one search through its worker threads, and closes cleanly.
Nothing outside a temporary folder is read or written: the config and data dirs point into it for the run.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..config import ENV_CONFIG_DIR, ENV_DATA_DIR
from ..models import STATUS_INDEXED
from ..smoke import _say, run_smoke

QUERY = "optional query parameter"
NOTE = "# Notes\n\n## Optional parameters\n\nSet a default of None to make a query parameter optional.\n"
PDF_LINES = ("Smoke test PDF", "The quick brown fox jumps over the lazy dog.",
             "Extracted by the PDF helper process, which a frozen app starts from its own executable.")


def tiny_pdf(lines: tuple[str, ...] | list[str] = PDF_LINES) -> bytes:
    """A valid one-page PDF (Helvetica text, correct xref) with these lines: no PDF library needed to make it."""

    def esc(t: str) -> str:
        return t.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    content = "BT /F1 12 Tf 16 TL 72 720 Td " + " ".join(f"({esc(t)}) Tj T*" for t in lines) + " ET"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> "
        "/Contents 5 0 R >>",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        f"<< /Length {len(content.encode('latin-1'))} >>\nstream\n{content}\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def _needs_offscreen() -> bool:
    if os.environ.get("QT_QPA_PLATFORM"):
        return False
    if sys.platform.startswith("win") or sys.platform == "darwin":
        return False
    return not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


@contextmanager
def isolated_app_dirs(prefix: str) -> Iterator[Path]:
    """A temporary folder that holds this run's config and data dirs (the env vars point there); the variables
    (and QT_QPA_PLATFORM) are restored afterwards, so a check or benchmark never touches the user's own."""
    saved = {k: os.environ.get(k) for k in (ENV_CONFIG_DIR, ENV_DATA_DIR, "QT_QPA_PLATFORM")}
    try:
        with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
            os.environ[ENV_CONFIG_DIR] = str(Path(tmp) / "config")
            os.environ[ENV_DATA_DIR] = str(Path(tmp) / "data")
            yield Path(tmp)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _wait(app: Any, pred: Callable[[], bool], timeout_s: float) -> bool:
    """Run the Qt event loop until ``pred()`` holds or the time is up."""
    from .event_pump import pump_events

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        pump_events(50)
        if pred():
            return True
        time.sleep(0.01)
    pump_events()
    return pred()


def run_gui_smoke() -> int:
    """Core checks, then the GUI checks; prints each check, returns 0 when all pass, 1 otherwise."""
    if run_smoke(gui=True) != 0:
        return 1
    t0 = time.perf_counter()
    try:
        with isolated_app_dirs("dm-gui-smoke-") as tmp:
            if _needs_offscreen():
                os.environ["QT_QPA_PLATFORM"] = "offscreen"
            ok = _gui_checks(tmp)
    except Exception as exc:  # the smoke check reports, it never tracebacks at a user
        _say(False, f"GUI: {type(exc).__name__}: {exc}")
        ok = False
    if not ok:
        return 1
    print(f"GUI smoke check passed in {time.perf_counter() - t0:.1f}s")
    return 0


def _gui_checks(tmp: Path) -> bool:
    from PySide6.QtCore import QMessageLogContext, QtMsgType, qInstallMessageHandler

    previous = None
    quiet = os.environ.get("QT_QPA_PLATFORM") == "offscreen"
    if quiet:
        # the offscreen platform warns "does not support propagateSizeHints()" for every window: not a finding
        def handler(mode: QtMsgType, context: QMessageLogContext, message: str) -> None:
            if "propagateSizeHints" not in message:
                sys.stderr.write(message + "\n")

        previous = qInstallMessageHandler(handler)
    try:
        return _window_checks(tmp)
    finally:
        if quiet:
            qInstallMessageHandler(previous)


def _window_checks(tmp: Path) -> bool:
    from PySide6 import __version__ as pyside_version
    from PySide6.QtWidgets import QApplication

    try:
        from .app import create_app
    except ImportError:  # a plain QApplication does the same job for this check
        running = QApplication.instance()
        app = running if isinstance(running, QApplication) else QApplication([sys.argv[0]])
    else:
        app = create_app([sys.argv[0]])
    _say(True, f"Qt started: PySide6 {pyside_version}, platform plugin '{app.platformName()}'")

    from .style import app_icon, apply_theme, resource_path

    apply_theme(app, "system")
    icon = app_icon()
    pix = icon.pixmap(64, 64)
    icon_ok = not icon.isNull() and not pix.isNull()
    _say(icon_ok, f"app icon {resource_path('icon.svg').name} rendered at {pix.width()}x{pix.height()} "
                  "(SVG icon engine)")
    qss_ok = bool(app.styleSheet().strip())
    _say(qss_ok, f"stylesheet {resource_path('style.qss').name} applied ({len(app.styleSheet())} chars)")
    app.setWindowIcon(icon)

    try:
        from .main_window import MainWindow
    except ImportError as exc:
        _say(False, f"main window not importable: {exc}")
        return False
    from ..config import Settings
    from ..models import IndexSummary

    settings = Settings(db_path=str(tmp / "gui.db"))
    window = MainWindow(settings, settings_path=tmp / "config" / "settings.toml")
    finished: list[IndexSummary | None] = []  # None: the job failed
    searched: list[str] = []
    window.job_finished.connect(finished.append)
    window.search_finished.connect(searched.append)
    window.resize(1100, 720)
    window.show()
    def exposed() -> bool:
        handle = window.windowHandle()
        return window.isVisible() and handle is not None and handle.isExposed()

    shown = _wait(app, exposed, 10)
    _say(shown, f"main window '{window.windowTitle()}' shown ({window.width()}x{window.height()})")

    opened = _wait(app, lambda: window.svc is not None, 60)
    _say(opened, f"window opened its library at {settings.db_path}")
    loaded = opened and _wait(app, lambda: window.embedder_state != "loading", 120) and window.embedder_state == "ready"
    _say(loaded, f"window loaded the embedder (state: {window.embedder_state})")

    docs = tmp / "docs"
    docs.mkdir()
    (docs / "note.md").write_text(NOTE, encoding="utf-8")
    (docs / "smoke.pdf").write_bytes(tiny_pdf())  # extracted by the PDF helper process (the frozen exe itself)
    window.add_paths([str(docs)])
    done_indexing = _wait(app, lambda: bool(finished) and not window.is_indexing(), 180)
    summary = finished[-1] if finished else None
    n_indexed = summary.indexed if summary else 0
    problems = [f"{Path(o.path).name}: {o.status} ({o.reason})" for o in (summary.outcomes if summary else [])
                if o.status != STATUS_INDEXED]
    indexed = done_indexing and n_indexed == 2
    _say(indexed, f"window indexed a note and a PDF (PDF helper process): {n_indexed} file(s), "
                  f"{summary.chunks_embedded if summary else 0} chunk(s) embedded"
                  + (f"; {'; '.join(problems)}" if problems else ""))

    window.search_bar.box.setText(QUERY)
    window.search_bar.request_now()
    done = _wait(app, lambda: QUERY in searched, 60)
    rows = window.results_model.rowCount()
    found = done and rows >= 1
    _say(found, f"window searched '{QUERY}': {rows} result(s) · {window.results_info.text()}")

    from .event_pump import pump_events

    window.close()
    closed = _wait(app, lambda: not window.isVisible() and window.svc is None, 30)
    _say(closed, "window closed cleanly (workers stopped, database closed)")
    window.deleteLater()
    pump_events()
    return all((icon_ok, qss_ok, shown, opened, loaded, indexed, found, closed))
