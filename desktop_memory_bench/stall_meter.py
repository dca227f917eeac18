"""Measure how long the Qt event loop stalls (the "is the window still responsive?" number).

A :class:`QTimer` ticks every ``interval_ms``; whenever the gap between two ticks is longer than the interval,
the excess is a stall: time during which the UI thread could not process input or paint. The longest stall
is the number to keep under ~100 ms while indexing a large folder.

Usage (in a benchmark or test, with a running QApplication)::

    from desktop_memory_bench.stall_meter import StallMeter

    meter = StallMeter(interval_ms=10)
    meter.start()
    ...                     # drive the app: drop a folder, wait for indexing with qtbot.waitUntil / app.processEvents
    report = meter.stop()   # StallReport
    print(report.summary())  # "max stall 42 ms · 3 stalls > 50 ms · 1,204 ticks over 12.3 s"
    assert report.max_stall_ms < 100

or as a context manager::

    with StallMeter() as meter:
        ...
    meter.report.max_stall_ms

The meter only measures while the event loop runs (``app.exec()``, ``qtbot.wait``, ``QEventLoop``); time spent
blocked *outside* the loop (e.g. a test sleeping with ``time.sleep``) is counted as a stall, by design.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, Qt, QTimer


@dataclass
class StallReport:
    """Result of one measurement. All times in milliseconds."""

    interval_ms: int
    duration_ms: float
    ticks: int
    max_stall_ms: float
    max_stall_at_ms: float  # when the longest stall ended, relative to start
    stalls: list[tuple[float, float]] = field(default_factory=list)  # (at_ms, stall_ms) for stalls >= threshold
    threshold_ms: float = 50.0

    def count_over(self, ms: float) -> int:
        """Number of recorded stalls longer than ``ms`` (only stalls >= threshold_ms are recorded)."""
        return sum(1 for _, s in self.stalls if s > ms)

    def summary(self) -> str:
        return (
            f"max stall {self.max_stall_ms:.0f} ms · {len(self.stalls)} stalls > {self.threshold_ms:.0f} ms"
            f" · {self.ticks:,} ticks over {self.duration_ms / 1000:.1f} s"
        )


class StallMeter(QObject):
    """Records the longest gap between timer ticks on the UI thread.

    ``interval_ms``: tick period (10 ms is fine-grained without measurable overhead).
    ``threshold_ms``: stalls at least this long are kept in ``report.stalls`` with their time.
    """

    def __init__(self, interval_ms: int = 10, threshold_ms: float = 50.0, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.interval_ms = interval_ms
        self.threshold_ms = threshold_ms
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._tick)
        self._t0 = 0.0
        self._last = 0.0
        self._ticks = 0
        self._max = 0.0
        self._max_at = 0.0
        self._stalls: list[tuple[float, float]] = []
        self.report: StallReport | None = None

    @property
    def running(self) -> bool:
        return self._timer.isActive()

    @property
    def max_stall_ms(self) -> float:
        """Longest stall so far (readable while running)."""
        return self._max

    def start(self) -> None:
        self._t0 = self._last = time.perf_counter()
        self._ticks = 0
        self._max = self._max_at = 0.0
        self._stalls = []
        self.report = None
        self._timer.start()

    def stop(self) -> StallReport:
        self._timer.stop()
        self._tick()  # count the stall in progress, if any
        now = time.perf_counter()
        self.report = StallReport(
            interval_ms=self.interval_ms,
            duration_ms=(now - self._t0) * 1000,
            ticks=self._ticks,
            max_stall_ms=self._max,
            max_stall_at_ms=self._max_at,
            stalls=list(self._stalls),
            threshold_ms=self.threshold_ms,
        )
        return self.report

    def _tick(self) -> None:
        now = time.perf_counter()
        stall = max(0.0, (now - self._last) * 1000 - self.interval_ms)
        self._last = now
        self._ticks += 1
        at = (now - self._t0) * 1000
        if stall > self._max:
            self._max, self._max_at = stall, at
        if stall >= self.threshold_ms:
            self._stalls.append((at, stall))

    def __enter__(self) -> StallMeter:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
