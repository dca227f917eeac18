"""`desktop-memory-gui --stall-bench FOLDER`: how responsive the real window stays while it indexes a big folder.

The benchmark drives the real :class:`MainWindow` the way a person would: it drops FOLDER on a fresh library,
types a new query every ``type_every_s`` seconds while the files are read and embedded, and flips to the Library
tab and back every ``library_every_s`` seconds (the Library is the costliest view to keep current). A 10 ms
:class:`StallMeter`-style timer records every tick's lateness; each tick is attributed to what the window was
doing at that moment, so the table says *where* a stall happened:

* ``reading files``: extraction and chunking, Search tab shown, typing;
* ``embedding``: every file keyword-searchable, vectors still arriving, Search tab shown, typing;
* ``Library shown``: the Library tab on screen (rebuilt every few seconds as documents arrive);
* ``tab switch``: the second after switching to the Library (a one-off rebuild).

It also reports when the first keyword result appeared after the drop and when the job ended. Everything runs in
a temporary folder (config, data and database), offscreen when there is no display. Figures are in docs/GUI.md.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from desktop_memory.gui.smoke import _needs_offscreen, isolated_app_dirs

QUERIES = ("how do I configure", "template functions", "shortcode parameters", "render markdown content",
           "menu entries", "taxonomy list page", "image processing resize", "multilingual site", "front matter dates")


@dataclass
class PhaseStalls:
    """Tick lateness (ms beyond the 10 ms period) observed in one phase."""

    phase: str
    seconds: float = 0.0
    ticks: int = 0
    max_ms: float = 0.0
    p99_ms: float = 0.0
    over_50: int = 0
    over_100: int = 0


@dataclass
class StallBenchReport:
    folder: str
    embedder: str
    files: int = 0
    chunks: int = 0
    first_keyword_result_s: float | None = None
    job_s: float = 0.0
    queries_typed: int = 0
    library_switches: int = 0
    phases: list[PhaseStalls] = field(default_factory=list)

    def table(self) -> str:
        rows = [f"UI responsiveness while indexing {self.folder} (embedder: {self.embedder})",
                f"{self.files:,} files, {self.chunks:,} chunks; job took {self.job_s:.1f} s; first keyword result "
                + (f"{self.first_keyword_result_s:.1f} s after the drop" if self.first_keyword_result_s is not None
                   else "never")
                + f"; {self.queries_typed} queries typed, {self.library_switches} switches to the Library",
                "",
                "| phase | seconds | ticks | max stall ms | p99 ms | stalls > 50 ms | > 100 ms |",
                "|---|---:|---:|---:|---:|---:|---:|"]
        for p in self.phases:
            rows.append(f"| {p.phase} | {p.seconds:.1f} | {p.ticks:,} | {p.max_ms:.0f} | {p.p99_ms:.0f} "
                        f"| {p.over_50} | {p.over_100} |")
        return "\n".join(rows)


def _summarise(phase: str, gaps: list[float], interval_ms: int) -> PhaseStalls:
    if not gaps:
        return PhaseStalls(phase)
    late = sorted(max(0.0, g - interval_ms) for g in gaps)
    p99 = late[min(len(late) - 1, round(0.99 * (len(late) - 1)))]
    return PhaseStalls(phase, seconds=sum(gaps) / 1000, ticks=len(gaps), max_ms=late[-1], p99_ms=p99,
                       over_50=sum(1 for x in late if x > 50), over_100=sum(1 for x in late if x > 100))


def run_stall_bench(folder: Path, *, embedder: str = "local", type_every_s: float = 1.5,
                    library_every_s: float = 6.0,
                    library_dwell_s: float = 2.0, timeout_s: float = 3600.0, interval_ms: int = 10,
                    log: Callable[[str], None] = lambda m: print(m, file=sys.stderr)) -> StallBenchReport:
    """Drop ``folder`` on a fresh window and measure event-loop stalls until the job ends (see the module doc)."""
    from desktop_memory.gui.app import create_app

    if _needs_offscreen():
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    app = create_app([sys.argv[0]])

    try:
        with isolated_app_dirs("dm-stall-bench-") as tmp:
            return _run(app, tmp, folder, embedder=embedder, type_every_s=type_every_s,
                        library_every_s=library_every_s, library_dwell_s=library_dwell_s, timeout_s=timeout_s,
                        interval_ms=interval_ms, log=log)
    finally:
        gc.unfreeze()


def _run(app: Any, tmp: Path, folder: Path, *, embedder: str, type_every_s: float, library_every_s: float,
         library_dwell_s: float, timeout_s: float, interval_ms: int, log: Callable[[str], None]) -> StallBenchReport:
    from PySide6.QtCore import QElapsedTimer, Qt, QTimer

    from desktop_memory.config import Settings
    from desktop_memory.gui.event_pump import pump_events
    from desktop_memory.gui.main_window import MainWindow

    settings = Settings(db_path=str(tmp / "bench.db"))
    factory = None
    if embedder == "hash":
        def factory(st: Settings) -> Any:
            from desktop_memory.embed.hashing import HashEmbedder
            from desktop_memory.service import MemoryService

            return MemoryService(st, embedder=HashEmbedder(64))
    window = MainWindow(settings, service_factory=factory, settings_path=tmp / "config" / "settings.toml")
    report = StallBenchReport(folder=str(folder), embedder=embedder)
    finished: list[Any] = []
    window.job_finished.connect(finished.append)
    window.resize(1200, 800)
    window.show()

    def spin(pred: Callable[[], bool], limit_s: float) -> bool:  # smoke._wait sleeps between pumps: a stall here
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline and not pred():
            pump_events(50)
        return pred()

    if not spin(lambda: window.svc is not None and window.embedder_state != "loading", 180):
        raise RuntimeError(f"the window did not open its library (embedder: {window.embedder_state})")
    log(f"window ready (embedder {window.embedder_state}); dropping {folder} …")
    gc.freeze()  # as the app does once its window is up (app.main)

    samples: list[tuple[str, float]] = []  # (phase, gap ms)
    clock = QElapsedTimer()
    state = {"last": 0.0, "next_query": type_every_s, "next_library": library_every_s, "library_since": -1.0,
             "switch_until": 0.0, "q": 0}

    def phase_now(now: float) -> str:
        if window.tabs.currentWidget() is window.library:
            return "tab switch" if now < state["switch_until"] else "Library shown"
        p = getattr(window.progress, "_last", None)
        if p is not None and p.phase not in ("scan", "extract") and p.files_done >= p.files_total:
            return "embedding"
        return "reading files"

    def tick() -> None:
        now = clock.nsecsElapsed() / 1e6
        samples.append((phase_now(now), now - state["last"]))
        state["last"] = now
        secs = now / 1000
        if report.first_keyword_result_s is None and window.results_model.rowCount() > 0:
            report.first_keyword_result_s = secs
        if window.tabs.currentWidget() is window.library:
            if secs - state["library_since"] >= library_dwell_s:
                window.tabs.setCurrentIndex(0)
            return
        if secs >= state["next_library"]:
            state["next_library"] = secs + library_every_s
            state["library_since"] = secs
            state["switch_until"] = now + 1000
            report.library_switches += 1
            window.tabs.setCurrentWidget(window.library)
        elif secs >= state["next_query"]:
            state["next_query"] = secs + type_every_s
            window.search_bar.box.setText(QUERIES[int(state["q"]) % len(QUERIES)])  # as typed: debounced search
            state["q"] += 1
            report.queries_typed += 1

    timer = QTimer()
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    timer.setInterval(interval_ms)
    timer.timeout.connect(tick)
    clock.start()
    timer.start()
    window.add_paths([str(folder)])
    done = spin(lambda: bool(finished) and not window.is_indexing(), timeout_s)
    timer.stop()
    report.job_s = clock.elapsed() / 1000
    if not done:
        window.cancel_job()
        spin(lambda: not window.is_indexing(), 60)
    summary = finished[-1] if finished else None
    report.files = int(getattr(summary, "indexed", 0) or 0) + int(getattr(summary, "unchanged", 0) or 0)
    report.chunks = int(getattr(summary, "chunks_added", 0) or 0)
    for name in ("reading files", "embedding", "Library shown", "tab switch"):
        report.phases.append(_summarise(name, [g for ph, g in samples if ph == name], interval_ms))
    report.phases.append(_summarise("whole run", [g for _, g in samples], interval_ms))
    window.close()
    spin(lambda: window.svc is None, 30)
    window.deleteLater()
    pump_events()
    if not done:
        raise RuntimeError(f"indexing did not finish within {timeout_s:.0f} s")
    return report


def main(argv: list[str]) -> int:
    """Parse the stall-bench options (after ``--stall-bench``) and print the table or JSON."""
    import argparse

    p = argparse.ArgumentParser(prog="desktop-memory-gui --stall-bench",
                                description="Measure the window's longest event-loop stalls while it indexes FOLDER.")
    p.add_argument("folder", type=Path)
    p.add_argument("--embedder", choices=("local", "hash"), default="local",
                   help="local = the real bundled model (default); hash = a fast fake, for a quick look")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.add_argument("--timeout", type=float, default=3600.0, help="give up after this many seconds")
    args = p.parse_args(argv)
    if not args.folder.is_dir():
        print(f"not a folder: {args.folder}", file=sys.stderr)
        return 2
    report = run_stall_bench(args.folder.resolve(), embedder=args.embedder, timeout_s=args.timeout)
    if args.json:
        data = asdict(report)
        print(json.dumps(data, indent=2))
    else:
        print(report.table())
    return 0
