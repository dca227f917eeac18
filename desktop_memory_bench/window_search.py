"""Search in the real window, timed as a person meets it, beside the benchmark's service-level figure.

Why a benchmark of its own: ``bench`` times ``MemoryService.search_outcome`` in a warm process, but a person waits
for the window: the search's worker, whatever else the window asks the service for, the hand-over to the UI thread,
the list, the preview and the paint. This module drives the real :class:`MainWindow` (Qt offscreen) in a fresh
process on a given library:

1. the window is built and shown; it waits ``--wait`` seconds (5 s: a person looks at the window first);
2. for each query it selects the search box's text (Ctrl+A), types the query key by key (``--key-ms`` apart, the
   box's search-as-you-type never fires in between) and presses Enter; the clock starts at Enter (the query's
   submission) and stops when the window's update pass that paints the results list has ended (every widget the
   results changed painted: the frame a person sees) after the window says the results are shown
   (``MainWindow.search_finished``); then it waits ``--think-ms`` before the next query;
3. a second fresh process times the same queries through ``MemoryService.search_outcome`` exactly as ``bench``
   does (one warm-up query, then each query once): the benchmark's p50 for the same library, in the same run.

Each window search also records what the window asked the service for while it ran (calls per search, their
time), so where the time goes is printed beside the total.

    python -m desktop_memory_bench.window_search LIBRARY.db --dataset ../shared/eval/scifact --queries 60
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from .child import run_module
from .latency import load_average, percentile

MODULE = "desktop_memory_bench.window_search"
OPEN_TIMEOUT_S = 120.0
SEARCH_TIMEOUT_S = 30.0
PAINT_WAIT_S = 0.25  # after the results are shown, the list's paint is awaited this long at most
TRACKED = ("search_outcome", "highlights", "build_context", "stats", "change_stamp", "library_listing",
           "library_page", "passage")


def _queries(dataset: Path, n: int) -> list[str]:
    from .dataset import load_beir

    ds = load_beir(dataset, "test")
    ds.limit_queries(n)
    return list(ds.queries.values())


def _settings(db: Path, embedder: str) -> Any:
    import dataclasses

    from desktop_memory.config import Settings

    base = Settings(db_path=str(db))
    kind: Any = embedder  # "local" or "hash" (the argument's choices)
    return dataclasses.replace(base, embedder=dataclasses.replace(base.embedder, kind=kind))


class _CallLog:
    """Wraps the service's methods (instance attributes) to count and time what the window asks for."""

    def __init__(self, svc: Any) -> None:
        self.calls: list[tuple[str, float, float, str]] = []  # (name, start, end, thread)
        self.parts: dict[float, dict[str, float]] = {}  # a search_outcome's own split (timings_ms), by its start
        self._lock = threading.Lock()
        for name in TRACKED:
            fn = getattr(svc, name, None)
            if fn is not None:
                setattr(svc, name, self._wrap(name, fn))

    def _wrap(self, name: str, fn: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                out = fn(*args, **kwargs)
                parts = getattr(out, "timings_ms", None)
                if isinstance(parts, dict):
                    with self._lock:
                        self.parts[t0] = dict(parts)
                return out
            finally:
                with self._lock:
                    self.calls.append((name, t0, time.perf_counter(), threading.current_thread().name))
        return timed

    def between(self, t0: float, t1: float) -> list[tuple[str, float, float, str]]:
        with self._lock:
            return [c for c in self.calls if c[1] >= t0 and c[1] <= t1]


def window_child(db: Path, queries: list[str], wait_s: float, key_ms: int, think_ms: int,
                 embedder: str, until_warm: bool = False) -> dict[str, Any]:
    """In this fresh process: the real window on ``db``; every query typed and submitted, timed to the paint."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QEvent, QEventLoop, QObject, Qt, QTimer
    from PySide6.QtTest import QTest

    from desktop_memory.gui.app import create_app
    from desktop_memory.gui.main_window import MainWindow

    app = create_app(["desktop-memory-window-bench"])
    cfg = Path(tempfile.mkdtemp(prefix="dm-winbench-"))
    t_start = time.perf_counter()
    window = MainWindow(_settings(db, embedder), settings_path=cfg / "settings.toml")
    window.resize(1280, 720)
    window.show()
    marks: dict[str, Any] = {"warm_ups_done_s": []}
    warm = getattr(window, "search_warm_up", None)  # absent on code before the warm-up existed
    if warm is not None:
        warm.finished.connect(lambda semantic: marks["warm_ups_done_s"].append(
            [bool(semantic), time.perf_counter() - t_start]))
    deadline = time.perf_counter() + OPEN_TIMEOUT_S
    while time.perf_counter() < deadline:
        app.processEvents()
        handle = window.windowHandle()
        if "shown_s" not in marks and window.isVisible() and handle is not None and handle.isExposed():
            marks["shown_s"] = time.perf_counter() - t_start
        if "open_s" not in marks and window.svc is not None:
            marks["open_s"] = time.perf_counter() - t_start
        if "shown_s" in marks and "open_s" in marks:
            break
        time.sleep(0.005)
    if window.svc is None:
        raise SystemExit("the library did not open in time")
    calls = _CallLog(window.svc)
    t_shown = t_start + marks["shown_s"]
    def pause(ms: int) -> None:
        """Let the window run for ``ms`` as the app's event loop does. Not QTest.qWait: it holds the GIL while it
        waits, so the window's workers (the warm-up, the search) barely ran meanwhile (0.6 % of their speed)."""
        loop = QEventLoop()
        QTimer.singleShot(max(0, ms), loop.quit)
        loop.exec()

    pause(int((t_shown + wait_s - time.perf_counter()) * 1000))  # a person looks at the window first
    deadline = time.perf_counter() + OPEN_TIMEOUT_S
    while until_warm and not any(sem for sem, _ in marks["warm_ups_done_s"]) and time.perf_counter() < deadline:
        pause(50)  # --until-warm: the first search once the warm-up (with the model's first run) has ended
    marks["first_search_after_shown_s"] = time.perf_counter() - t_shown
    marks["embedder_state_at_first_search"] = window.embedder_state

    painted: list[float] = []
    waiting: list[QEventLoop] = []

    def wake() -> None:
        if waiting:
            waiting[-1].quit()

    def wait_for(cond: Any, timeout_s: float) -> None:
        """Run Qt's event loop until ``cond()`` (as in the app: the UI thread waits inside Qt, not in Python)."""
        end = time.perf_counter() + timeout_s
        timer = QTimer()
        timer.setSingleShot(True)
        while not cond() and time.perf_counter() < end:
            loop = QEventLoop()
            waiting.append(loop)
            timer.timeout.connect(loop.quit)
            timer.start(max(1, int((end - time.perf_counter()) * 1000)))
            loop.exec()
            timer.stop()
            timer.timeout.disconnect(loop.quit)
            waiting.pop()

    drawn: list[float] = []  # the end of the window's update pass that painted the list (the frame a person sees)
    pass_id = [0]

    def pass_ended(which: int) -> None:
        if which == pass_id[0] and not drawn:
            drawn.append(time.perf_counter())
            wake()

    class PaintSpy(QObject):
        def eventFilter(self, _obj: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint:
                painted.append(time.perf_counter())
                if len(painted) == 1:  # a zero timer runs once the update pass (every dirty widget) has painted
                    QTimer.singleShot(0, lambda which=pass_id[0]: pass_ended(which))
            return False

    spy = PaintSpy()
    window.results_view.viewport().installEventFilter(spy)
    finished: list[tuple[str, float]] = []
    def on_finished(q: str) -> None:
        finished.append((q, time.perf_counter()))
        wake()

    window.search_finished.connect(on_finished)
    ui: dict[str, list[float]] = {"show_response": [], "preview": []}  # the UI thread's own work per search

    def timed_ui(name: str, fn: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                ui[name].append((time.perf_counter() - t) * 1000)
        return run

    tab = window.search_tab
    # instance attributes: timing wrappers, installed on purpose
    tab.show_response = timed_ui("show_response", tab.show_response)  # type: ignore[method-assign]
    tab.preview.show_result = timed_ui("preview", tab.preview.show_result)  # type: ignore[method-assign]
    box = window.search_bar.box
    rows: list[dict[str, Any]] = []
    for q in queries:
        box.setFocus()
        QTest.keyClick(box, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        for ch in q:  # key by key, the window's event loop running in between (QTest's own delay holds the GIL)
            QTest.keyClicks(box, ch)
            pause(key_ms)
        app.processEvents()
        finished.clear()
        for spent in ui.values():
            spent.clear()
        t0 = time.perf_counter()
        QTest.keyClick(box, Qt.Key.Key_Return)
        wait_for(lambda: any(fq == box.text().strip() for fq, _ in finished), SEARCH_TIMEOUT_S)
        if not finished:
            rows.append({"query": q, "error": "no results within the timeout"})
            continue
        t_shown_q = finished[-1][1]
        painted.clear()
        drawn.clear()
        pass_id[0] += 1
        wait_for(lambda: bool(drawn), PAINT_WAIT_S)
        t_first_paint = painted[0] if painted else t_shown_q
        t_done = drawn[0] if drawn else t_first_paint
        asked = calls.between(t0, t_shown_q)
        rows.append({
            "query": q,
            "ms": (t_done - t0) * 1000,
            "shown_ms": (t_shown_q - t0) * 1000,
            "first_paint_ms": (t_first_paint - t0) * 1000,
            "painted": bool(drawn),
            "results": window.results_model.rowCount(),
            "calls": [{"name": n, "start_ms": (s - t0) * 1000, "ms": (e - s) * 1000} for n, s, e, _ in asked],
            "ui_ms": {k: sum(v) for k, v in ui.items()},
            "parts": [calls.parts[s] for n, s, _, _ in asked if n == "search_outcome" and s in calls.parts],
        })
        pause(think_ms)  # the person reads; the context block is packed meanwhile
    # the same queries straight through the service, in this process, right after (same caches, same load)
    direct, paused = [], []
    direct_parts, paused_parts = [], []
    for q in queries:
        t0 = time.perf_counter()
        out = window.svc.search_outcome(q, backend="hybrid")
        direct.append((time.perf_counter() - t0) * 1000)
        direct_parts.append(dict(out.timings_ms))
    for q in queries:  # ... and with the person's pause before each, as in the window (caches and threads go cold)
        pause(think_ms)
        t0 = time.perf_counter()
        out = window.svc.search_outcome(q, backend="hybrid")
        paused.append((time.perf_counter() - t0) * 1000)
        paused_parts.append(dict(out.timings_ms))
    window.close()
    app.processEvents()
    return {**marks, "searches": rows, "direct_ms": direct, "paused_ms": paused, "direct_parts": direct_parts,
            "paused_parts": paused_parts, "load_avg": load_average()}


def service_child(db: Path, queries: list[str], embedder: str,
                  pace_ms: tuple[int, int] | None = None) -> dict[str, Any]:
    """In this fresh process: the same queries through ``MemoryService.search_outcome``, as ``bench`` times them.
    ``pace_ms`` (key ms, think ms): before each query, wait as long as the window's person does (typing it, then
    reading), so the figure spans the same minute of a shared machine as the window's instead of a few seconds."""
    from desktop_memory.service import MemoryService

    svc = MemoryService(_settings(db, embedder), db_path=db)
    try:
        t0 = time.perf_counter()
        svc.load_embedder()
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        svc.search_outcome(queries[0], backend="hybrid")  # bench's warm-up query (here also: a cold first search)
        cold_ms = (time.perf_counter() - t0) * 1000
        walls, parts = [], []
        for q in queries:
            if pace_ms is not None:
                time.sleep((pace_ms[0] * len(q) + pace_ms[1]) / 1000)
            t0 = time.perf_counter()
            out = svc.search_outcome(q, backend="hybrid")
            walls.append((time.perf_counter() - t0) * 1000)
            parts.append(dict(out.timings_ms))
        chunks = svc.stats().chunks
    finally:
        svc.close()
    return {"embedder_load_s": load_s, "cold_first_ms": cold_ms, "walls_ms": walls, "parts": parts, "chunks": chunks,
            "load_avg": load_average()}


PARTS = ("embed", "fts", "dense", "fuse", "fetch", "total")


def _parts_p50(parts: list[dict[str, float]]) -> dict[str, float]:
    """p50 of each part of the searcher's own split (``SearchOutcome.timings_ms``) over these searches."""
    return {k: percentile([p[k] for p in parts if k in p], 50) for k in PARTS if any(k in p for p in parts)}


def summarise(window: dict[str, Any], service: dict[str, Any]) -> dict[str, Any]:
    searches = [s for s in window["searches"] if "ms" in s]
    warm = [s["ms"] for s in searches[1:]]
    svc_walls = service["walls_ms"]
    out: dict[str, Any] = {
        "chunks": service["chunks"],
        "window_first_ms": searches[0]["ms"] if searches else None,
        "window_warm_p50_ms": percentile(warm, 50) if warm else None,
        "window_warm_p95_ms": percentile(warm, 95) if warm else None,
        # the clock stopped at the list's first paint event instead (before its paint: the earlier measure)
        "window_warm_first_paint_p50_ms": percentile([s["first_paint_ms"] for s in searches[1:]
                                                      if "first_paint_ms" in s], 50) if warm else None,
        "service_cold_first_ms": service["cold_first_ms"],
        "in_window_service_p50_ms": percentile(window["direct_ms"][1:], 50),
        "in_window_service_p95_ms": percentile(window["direct_ms"][1:], 95),
        "in_window_paused_p50_ms": percentile(window["paused_ms"], 50),
        "in_window_paused_p95_ms": percentile(window["paused_ms"], 95),
        "service_p50_ms": percentile(svc_walls, 50),
        "service_p95_ms": percentile(svc_walls, 95),
    }
    if out["window_warm_p50_ms"] is not None:
        out["ratio_p50"] = out["window_warm_p50_ms"] / out["service_p50_ms"]
        out["ratio_p50_same_process"] = out["window_warm_p50_ms"] / out["in_window_service_p50_ms"]
    out["warm_ups_done_s"] = window.get("warm_ups_done_s")
    out["shown_s"] = window.get("shown_s")
    out["first_search_after_shown_s"] = window.get("first_search_after_shown_s")
    per_search: dict[str, list[float]] = {}
    for s in searches[1:]:
        names = [c["name"] for c in s["calls"]]
        for name in set(names):
            per_search.setdefault(name + " calls", []).append(float(names.count(name)))
            per_search.setdefault(name + " ms", []).append(sum(c["ms"] for c in s["calls"] if c["name"] == name))
    out["asked_per_warm_search_p50"] = {k: percentile(v, 50) for k, v in sorted(per_search.items())}
    overhead = [s["ms"] - sum(c["ms"] for c in s["calls"] if c["name"] == "search_outcome") for s in searches[1:]]
    out["window_overhead_p50_ms"] = percentile(overhead, 50) if overhead else None
    for name in ("show_response", "preview"):
        spent = [s["ui_ms"][name] for s in searches[1:] if "ui_ms" in s]
        out[f"ui_{name}_p50_ms"] = percentile(spent, 50) if spent else None
    out["parts_p50"] = {
        "window": _parts_p50([p for s in searches[1:] for p in s.get("parts", [])]),
        "in_window": _parts_p50(window.get("direct_parts", [])[1:]),
        "in_window_paused": _parts_p50(window.get("paused_parts", [])),
        "fresh_process": _parts_p50(service.get("parts", [])),
    }
    out["asked_first_search"] = searches[0]["calls"] if searches else []
    return out


def format_table(summary: dict[str, Any], n: int) -> str:
    def ms(v: Any) -> str:
        return f"{v:8.1f}" if isinstance(v, (int, float)) else f"{'-':>8}"

    lines = [
        f"search in the window · {summary['chunks']:,} chunks · {n} queries (hybrid) · {os.cpu_count()} CPUs",
        "                                     first    p50 warm  p95 warm",
        f"window (Enter → results painted)  {ms(summary['window_first_ms'])}  {ms(summary['window_warm_p50_ms'])}"
        f"  {ms(summary['window_warm_p95_ms'])}",
        f"  ... to the list's first paint event {'':6}  {ms(summary.get('window_warm_first_paint_p50_ms'))}",
        f"service (bench's search_outcome)  {ms(summary['service_cold_first_ms'])}  {ms(summary['service_p50_ms'])}"
        f"  {ms(summary['service_p95_ms'])}",
        f"  the same, in the window's process {'':8}  {ms(summary['in_window_service_p50_ms'])}"
        f"  {ms(summary['in_window_service_p95_ms'])}",
        f"  ... each after the person's pause {'':8}  {ms(summary['in_window_paused_p50_ms'])}"
        f"  {ms(summary['in_window_paused_p95_ms'])}",
    ]
    if "ratio_p50" in summary:
        lines.append(f"window p50 / service p50: {summary['ratio_p50']:.2f}× (fresh process), "
                     f"{summary['ratio_p50_same_process']:.2f}× (the window's process), "
                     f"{summary['window_warm_p50_ms'] / summary['in_window_paused_p50_ms']:.2f}× (the same pauses)")
    done = ", ".join(f"{'semantic' if sem else 'keyword'} {t - (summary['shown_s'] or 0):.1f} s"
                     for sem, t in summary.get("warm_ups_done_s") or [])
    lines.append(f"warm-up done after the window was shown: {done or 'none reported'}; first query typed "
                 f"{summary.get('first_search_after_shown_s') or 0:.1f} s after it was shown")
    if summary.get("window_overhead_p50_ms") is not None:
        lines.append("the window's own time above its search_outcome call, p50: "
                     f"{summary['window_overhead_p50_ms']:.1f} ms (showing the response "
                     f"{ms(summary.get('ui_show_response_p50_ms')).strip()} ms, of which the preview "
                     f"{ms(summary.get('ui_preview_p50_ms')).strip()} ms)")
    parts = summary.get("parts_p50") or {}
    if parts:
        lines.append("the searcher's own split, p50 ms:  " + "".join(f"{k:>8}" for k in PARTS))
        for where, split in parts.items():
            lines.append(f"  {where:<32}" + "".join(ms(split.get(k)) for k in PARTS))
    asked = ", ".join(f"{k} {v:.1f}" for k, v in summary["asked_per_warm_search_p50"].items())
    lines.append(f"the window asked the service, per warm search (p50): {asked or 'nothing tracked'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m " + MODULE, description=__doc__.split("\n\n")[0])
    ap.add_argument("db", type=Path, help="the library (an existing database file)")
    ap.add_argument("--dataset", type=Path, required=True, help="BEIR folder whose test queries are typed")
    ap.add_argument("--queries", type=int, default=60, help="queries typed (the first one is the first search)")
    ap.add_argument("--wait", type=float, default=5.0, help="seconds the window is open before the first query")
    ap.add_argument("--key-ms", type=int, default=15, help="milliseconds between two typed keys")
    ap.add_argument("--think-ms", type=int, default=800, help="milliseconds between a result and the next query")
    ap.add_argument("--until-warm", action="store_true",
                    help="after --wait, also wait until the window's warm-up has ended (its model step included)")
    ap.add_argument("--embedder", default="local", choices=("local", "hash"))
    ap.add_argument("--paced", action="store_true",
                    help="also time a fresh process that waits before each query as the window's person does")
    ap.add_argument("--bracket", action="store_true",
                    help="also time the fresh process before the window (a shared machine's load moves between them)")
    ap.add_argument("--out", type=Path, default=None, help="also write the JSON report here")
    ap.add_argument("--child", choices=("window", "service"), default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    db = args.db.expanduser().resolve()
    if not db.is_file():
        print(f"{db} is not a library file.", file=sys.stderr)
        return 2
    queries = _queries(args.dataset, args.queries)
    if args.child == "window":
        print(json.dumps(window_child(db, queries, args.wait, args.key_ms, args.think_ms, args.embedder,
                                      args.until_warm)))
        return 0
    if args.child == "service":
        pace = (args.key_ms, args.think_ms) if args.paced else None
        print(json.dumps(service_child(db, queries, args.embedder, pace)))
        return 0
    common = [str(db), "--dataset", str(args.dataset), "--queries", str(args.queries), "--embedder", args.embedder]
    before: dict[str, Any] | None = None
    if args.bracket:
        print("service (before the window): the same queries in a fresh process …", file=sys.stderr, flush=True)
        before, err = run_module(MODULE, [*common, "--child", "service"], timeout_s=3600)
        if before is None:
            print(f"the service run failed:\n{err[-2000:]}", file=sys.stderr)
            return 1
    print(f"window: {len(queries)} queries typed into a fresh window on {db} …", file=sys.stderr, flush=True)
    win, err = run_module(MODULE, [*common, "--child", "window", "--wait", str(args.wait), "--key-ms",
                                   str(args.key_ms), "--think-ms", str(args.think_ms),
                                   *(["--until-warm"] if args.until_warm else [])], timeout_s=3600)
    if win is None:
        print(f"the window run failed:\n{err[-2000:]}", file=sys.stderr)
        return 1
    print("service: the same queries through search_outcome in a fresh process …", file=sys.stderr, flush=True)
    svc, err = run_module(MODULE, [*common, "--child", "service"], timeout_s=3600)
    if svc is None:
        print(f"the service run failed:\n{err[-2000:]}", file=sys.stderr)
        return 1
    paced: dict[str, Any] | None = None
    if args.paced:
        print("service (paced like the window): the same queries in a fresh process …", file=sys.stderr, flush=True)
        paced, err = run_module(MODULE, [*common, "--child", "service", "--paced", "--key-ms", str(args.key_ms),
                                         "--think-ms", str(args.think_ms)], timeout_s=3600)
        if paced is None:
            print(f"the paced service run failed:\n{err[-2000:]}", file=sys.stderr)
            return 1
    summary = summarise(win, svc)
    text = format_table(summary, len(queries))
    if paced is not None:
        summary["service_paced_p50_ms"] = percentile(paced["walls_ms"], 50)
        summary["service_paced_parts_p50"] = _parts_p50(paced.get("parts", []))
        if summary.get("window_warm_p50_ms") is not None:
            summary["ratio_p50_paced"] = summary["window_warm_p50_ms"] / summary["service_paced_p50_ms"]
            text += (f"\nthe fresh process paced like the window: p50 {summary['service_paced_p50_ms']:.1f} ms; "
                     f"window p50 / that: {summary['ratio_p50_paced']:.2f}×")
    if before is not None:
        summary["service_before_p50_ms"] = percentile(before["walls_ms"], 50)
        if summary.get("window_warm_p50_ms") is not None:
            summary["ratio_p50_before"] = summary["window_warm_p50_ms"] / summary["service_before_p50_ms"]
            text += (f"\nthe fresh process before the window: p50 {summary['service_before_p50_ms']:.1f} ms "
                     f"(after it: {summary['service_p50_ms']:.1f} ms); window p50 / that: "
                     f"{summary['ratio_p50_before']:.2f}×")
    print(text)
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "window": win, "service": svc, "service_before": before,
                                        "service_paced": paced}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
