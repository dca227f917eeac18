"""Run pending Qt events from Python code that waits in a loop (smoke check, benchmarks, screenshot script).

Why not ``QApplication.processEvents()``: in PySide6 6.12 the static ``QCoreApplication.processEvents`` drops a
reference to ``None`` on every call, so a loop that calls it a few thousand times kills the interpreter with
"Fatal Python error: none_dealloc". ``QEventLoop.processEvents`` (an instance method) does not, so every wait
loop goes through :func:`pump_events`. ``tests/gui/test_errors_and_helpers.py`` guards the reference count.
"""

from __future__ import annotations

from PySide6.QtCore import QEventLoop

_loops: list[QEventLoop] = []  # the one loop, made on first use (after the QApplication exists)


def pump_events(max_ms: int = 0) -> None:
    """Process pending events (for up to ``max_ms`` milliseconds when > 0), like ``processEvents``."""
    if not _loops:
        _loops.append(QEventLoop())
    loop = _loops[0]
    if max_ms > 0:
        loop.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, max_ms)
    else:
        loop.processEvents(QEventLoop.ProcessEventsFlag.AllEvents)
