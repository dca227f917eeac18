"""Quick-search popup timings: the command to a visible popup, and the last keystroke to the results.

    python -m desktop_memory_bench.quick_bench --db LIBRARY.db [--runs 20] [--queries ../shared/eval/scifact]

The running app is built here exactly as `desktop-memory-gui` builds it (MainWindow on the real MemoryService and
model, the tray/popup/single-instance shell from gui/desktop_integration.py), with a throwaway config folder. Then:

- **handoff**: each run starts the real command `desktop-memory-gui --quick --db LIBRARY.db` as a second process
  and times from just before it is spawned to the popup's first paint in this (the running) app; the second
  process's own exit time is reported too;
- **results**: for each query, types it into the popup key by key (like a person) and times from the last keystroke
  to the results being listed, and from the search actually starting (after the popup's debounce) to the results.

Run it under a real X server (`DISPLAY=:N`) for honest paint times; with QT_QPA_PLATFORM=offscreen it still runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .latency import load_average, percentile
from .table import render_table


def _command(db: Path) -> list[str]:
    script = Path(sys.executable).parent / "desktop-memory-gui"
    if script.is_file():
        return [str(script), "--quick", "--db", str(db)]
    return [sys.executable, "-m", "desktop_memory.gui.app", "--quick", "--db", str(db)]


def _stats(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "p50": percentile(values, 50), "p90": percentile(values, 90),
            "max": max(values) if values else float("nan")}


def run(db: Path, runs: int, queries: list[str]) -> dict[str, Any]:
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtTest import QTest

    from desktop_memory.config import settings_path
    from desktop_memory.gui.app import create_app
    from desktop_memory.gui.desktop_integration import install_shell
    from desktop_memory.gui.main_window import MainWindow
    from desktop_memory.settings_file import load_settings

    app = create_app()
    settings = dataclasses.replace(load_settings(), db_path=str(db.resolve()))
    window = MainWindow(settings, settings_path=settings_path())
    shell = install_shell(app, window)
    window.show()

    def wait(cond: Callable[[], bool], timeout_s: float = 60.0) -> None:
        end = time.monotonic() + timeout_s
        while not cond():
            if time.monotonic() > end:
                raise SystemExit("timed out waiting for the app")
            app.processEvents()
            time.sleep(0.001)

    wait(lambda: window.svc is not None and window.embedder_state in ("ready", "error"), 120)
    popup = shell.show_quick()  # build it once, as the first request would
    popup.hide()
    painted: list[float] = []

    class PaintSpy(QObject):
        def eventFilter(self, obj: QObject, e: QEvent) -> bool:
            if e.type() == QEvent.Type.Paint and not painted:
                painted.append(time.perf_counter())
            return False

    spy = PaintSpy()
    popup.installEventFilter(spy)
    received: list[float] = []
    if shell.server is not None:
        shell.server.message.connect(lambda _m: received.append(time.perf_counter()))
    cmd = _command(db)
    handoff, exits, in_app = [], [], []
    for _ in range(runs):
        painted.clear()
        received.clear()
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=os.environ.copy(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def ready(p: subprocess.Popen[bytes] = proc) -> bool:
            return bool(painted) and p.poll() is not None

        wait(ready, 30)
        handoff.append((painted[0] - t0) * 1000)
        if received:
            in_app.append((painted[0] - received[0]) * 1000)
        exits.append((time.perf_counter() - t0) * 1000 if proc.returncode == 0 else float("nan"))
        popup.hide()
        for _i in range(20):
            app.processEvents()
            time.sleep(0.005)

    bare = []  # the floor: this Python starting and exiting, doing nothing
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=False)
        bare.append((time.perf_counter() - t0) * 1000)

    popup.summon()
    started: list[float] = []
    shown: list[float] = []
    search = popup.searcher.search

    def timed_search(request: Any) -> int:  # the debounce fired: the search starts now
        started.append(time.perf_counter())
        return search(request)

    popup.searcher.search = timed_search  # type: ignore[method-assign]  # timing wrapper, installed on purpose
    popup.results_shown.connect(lambda _q: shown.append(time.perf_counter()))
    after_key, after_debounce = [], []
    for q in queries:
        popup.box.clear()
        started.clear()
        shown.clear()
        QTest.keyClicks(popup.box, q)
        last_key = time.perf_counter()
        wait(lambda: bool(shown), 30)
        after_key.append((shown[-1] - last_key) * 1000)
        after_debounce.append((shown[-1] - started[-1]) * 1000)
    chunks = window.stats.chunks if window.stats else None
    shell.close()
    window.close()
    return {"handoff_ms": _stats(handoff), "command_exit_ms": _stats(exits), "request_to_paint_ms": _stats(in_app),
            "bare_python_ms": _stats(bare),
            "results_after_key_ms": _stats(after_key), "results_after_debounce_ms": _stats(after_debounce),
            "chunks": chunks, "queries": len(queries),
            "platform": os.environ.get("QT_QPA_PLATFORM") or ("xcb" if os.environ.get("DISPLAY") else "default"),
            "load_avg": load_average()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m desktop_memory_bench.quick_bench", description=__doc__.split("\n")[0])
    p.add_argument("--db", type=Path, required=True, help="the library to open (e.g. the SciFact bench index)")
    p.add_argument("--runs", type=int, default=20, help="second-process handoffs to time")
    p.add_argument("--queries", type=Path, default=None, help="a BEIR folder whose queries are typed (first 30)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    queries = ["how do vaccines work", "effect of aspirin on cancer", "gene expression in stem cells"]
    if args.queries:
        with open(args.queries / "queries.jsonl", encoding="utf-8") as fh:
            queries = [json.loads(line)["text"] for line in fh][:30]
    cfg = tempfile.mkdtemp(prefix="dm-quick-bench-")
    os.environ["DESKTOP_MEMORY_CONFIG_DIR"] = cfg  # the window saves its state on close: never in the real config
    try:
        report = run(args.db, args.runs, queries)
    finally:
        shutil.rmtree(cfg, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"quick search on {report['chunks']} chunks, {report['platform']}, load average {report['load_avg']}")
    parts = (("command → popup painted", "handoff_ms"),
             ("  of which: request received → painted", "request_to_paint_ms"),
             ("command → second process exited", "command_exit_ms"),
             ("(floor: `python -c pass` start → exit)", "bare_python_ms"),
             ("last keystroke → results", "results_after_key_ms"),
             ("search start (after debounce) → results", "results_after_debounce_ms"))
    rows = [[label, str(report[k]["n"]), f"{report[k]['p50']:.1f}", f"{report[k]['p90']:.1f}",
             f"{report[k]['max']:.1f}"] for label, k in parts]
    print(render_table(["", "n", "p50 ms", "p90 ms", "max ms"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
