"""The window's responsiveness while its watcher absorbs a branch switch (issue 14 §1: no UI stall over 100 ms).

    python -m desktop_memory_bench.watch_stall [--files 5000] [--embedder hash|local]

A temporary library holds a git repository of ``--files`` Markdown files (desktop_memory_bench.watch_bench's
repository: the switch rewrites 60 %, deletes 20 %, adds 20 %). The real MainWindow opens it, its watcher starts,
and a 10 ms StallMeter runs while ``git checkout`` switches branches twice: once with the Search tab shown, once
with the Library shown (the costliest view to refresh). Each phase lasts from the checkout until the watcher's
update has landed and the Library/stats refresh it triggers has been applied, plus one second.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, Literal

from desktop_memory.config import EmbedderSettings, Settings

from .table import render_table
from .watch_bench import _git, make_repo


def run(files: int, embedder: str) -> dict[str, Any]:
    from desktop_memory.gui.smoke import _needs_offscreen, isolated_app_dirs

    if _needs_offscreen():
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from desktop_memory.gui.app import create_app
    from desktop_memory.gui.event_pump import pump_events
    from desktop_memory.gui.main_window import MainWindow
    from desktop_memory.service import MemoryService

    app = create_app([sys.argv[0]])
    out: dict[str, Any] = {"files": files, "embedder": embedder, "phases": []}

    def spin(pred: Callable[[], bool], limit_s: float) -> bool:
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline and not pred():
            pump_events(20)
        return pred()

    with isolated_app_dirs("dm-watch-stall-") as tmp:
        repo = tmp / "repo"
        expect = make_repo(repo, files)
        kind: Literal["local", "hash"] = "hash" if embedder == "hash" else "local"
        settings = Settings(db_path=str(tmp / "bench.db"), embedder=EmbedderSettings(kind=kind))
        svc = MemoryService(settings)
        t = time.perf_counter()
        svc.index_paths([repo])
        out["initial_index_s"] = time.perf_counter() - t
        svc.close()
        window = MainWindow(settings, settings_path=tmp / "config" / "settings.toml")
        window.resize(1200, 800)
        window.show()
        if not spin(lambda: window.svc is not None and window.watch.ready and window.watch.watching_count() == 1
                    and window.embedder_state != "loading", 300):
            raise RuntimeError("the window did not open its library and start watching")
        spin(lambda: False, 2.0)  # the start-up catch-up and first refreshes settle
        out["phases"].append(_idle(window, spin, 10.0))
        for branch, tab in (("b", "Search"), ("a", "Library")):
            out["phases"].append(_switch(window, repo, branch, tab, expect, spin))
        window.close()
        spin(lambda: window.svc is None, 30)
        window.deleteLater()
        pump_events()
    del app
    return out


def _idle(window: Any, spin: Callable[[Callable[[], bool], float], bool], seconds: float) -> dict[str, Any]:
    """The baseline: the same window, watching, nothing changing (what the machine itself costs the event loop)."""
    from .stall_meter import StallMeter

    window.tabs.setCurrentIndex(0)
    meter = StallMeter(interval_ms=10)
    meter.start()
    spin(lambda: False, seconds)
    report = meter.stop()
    return {"switch": "idle baseline, nothing changes", "absorbed": True, "git_s": float("nan"),
            "update_after_s": float("nan"), "updates": 0, "seconds": report.duration_ms / 1000,
            "ticks": report.ticks, "max_stall_ms": report.max_stall_ms, "over_50": report.count_over(50),
            "over_100": report.count_over(100)}


def _switch(window: Any, repo: Any, branch: str, tab: str, expect: dict[str, int],
            spin: Callable[[Callable[[], bool], float], bool]) -> dict[str, Any]:
    """One branch switch under the stall meter, from the checkout until the refresh it triggers has landed."""
    from .stall_meter import StallMeter

    window.tabs.setCurrentIndex(0 if tab == "Search" else 1)
    spin(lambda: False, 1.5)
    updates: list[Any] = []
    refreshed: list[float] = []
    on_update = window.watch.updated.connect(updates.append)
    on_refresh = window.library_refreshed.connect(lambda: refreshed.append(time.perf_counter()))

    def absorbed() -> bool:
        done = [u for u in updates if u.changed]
        return bool(sum(u.indexed for u in done) >= expect["modified"] + expect["added"]
                    and sum(u.removed for u in done) >= expect["deleted"])

    meter = StallMeter(interval_ms=10)
    meter.start()
    t0 = time.perf_counter()
    git_done: list[float] = []

    def checkout() -> None:  # off the UI thread: the meter must see the window, not this script, waiting
        _git(repo, "checkout", "-q", branch)
        git_done.append(time.perf_counter() - t0)

    threading.Thread(target=checkout, daemon=True).start()
    ok = spin(absorbed, 900)
    spin(lambda: bool(git_done), 60)
    git_s = git_done[0] if git_done else float("nan")
    t_update = time.perf_counter()
    spin(lambda: any(r >= t_update for r in refreshed), 60)
    spin(lambda: False, 1.0)
    report = meter.stop()
    window.watch.updated.disconnect(on_update)
    window.library_refreshed.disconnect(on_refresh)
    return {
        "switch": f"checkout {branch}, {tab} tab shown", "absorbed": ok, "git_s": git_s,
        "update_after_s": t_update - t0, "updates": len([u for u in updates if u.changed]),
        "seconds": report.duration_ms / 1000, "ticks": report.ticks, "max_stall_ms": report.max_stall_ms,
        "over_50": report.count_over(50), "over_100": report.count_over(100),
    }


def _f(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.1f}"  # NaN: not applicable


def render(r: dict[str, Any]) -> str:
    rows = [[p["switch"], _f(p["git_s"]), _f(p["update_after_s"]), str(p["updates"]),
             f"{p['seconds']:.1f}", f"{p['ticks']:,}", f"{p['max_stall_ms']:.0f}", str(p["over_50"]),
             str(p["over_100"])] for p in r["phases"]]
    head = (f"UI stalls while the window's watcher absorbs a {r['files']:,}-file branch switch "
            f"(embedder {r['embedder']}; library indexed in {r['initial_index_s']:.1f} s)")
    table = render_table(["phase", "git s", "update after s", "updates", "seconds", "ticks", "max stall ms",
                          "> 50 ms", "> 100 ms"], rows)
    return f"{head}\n{table}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m desktop_memory_bench.watch_stall", description=__doc__)
    ap.add_argument("--files", type=int, default=5000)
    ap.add_argument("--embedder", choices=("hash", "local"), default="hash",
                    help="hash (default): the fast test fake, so the run measures the watch, not embedding")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    result = run(args.files, args.embedder)
    print(json.dumps(result, indent=2) if args.json else render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
