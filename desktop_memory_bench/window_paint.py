"""The window's own work per search on its UI thread, in CPU time: showing a response and the paint that follows.

Why CPU time: on a shared machine a wall-clock paint is mostly waiting for a core (the same 14 ms of work took
50 ms at load 10), so a change to the paint is compared by the UI thread's own CPU (``time.thread_time``). The
real window (Qt offscreen) opens ``LIBRARY.db``, searches a few queries once, then shows their responses again and
again (``MainWindow._search_done``, as a finished search does) and lets the window paint after each; a
``QApplication.notify`` override adds up each widget's paint.

    python -m desktop_memory_bench.window_paint LIBRARY.db --embedder hash --rounds 30
"""

from __future__ import annotations

import argparse
import collections
import os
import tempfile
import time
from pathlib import Path
from typing import Any

QUERIES = ("vitamin d deficiency", "gene expression in cancer cells", "obesity and insulin resistance")


def measure(db: Path, embedder: str, rounds: int) -> dict[str, Any]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QEvent, QEventLoop, QObject, QTimer
    from PySide6.QtWidgets import QApplication

    from desktop_memory.gui.main_window import MainWindow

    from .window_search import _settings

    painted: dict[str, float] = collections.defaultdict(float)

    def widget_path(obj: QObject) -> str:
        names: list[str] = []
        node: QObject | None = obj
        while node is not None and len(names) < 3:
            names.append(type(node).__name__)
            node = node.parent()
        return "<".join(names)

    class App(QApplication):
        def notify(self, obj: QObject, ev: QEvent) -> bool:
            if ev.type() != QEvent.Type.Paint:
                return super().notify(obj, ev)
            t = time.thread_time()
            try:
                return super().notify(obj, ev)
            finally:
                painted[widget_path(obj)] += (time.thread_time() - t) * 1000

    app = App(["desktop-memory-window-paint"])
    window = MainWindow(_settings(db, embedder), settings_path=Path(tempfile.mkdtemp()) / "settings.toml")
    window.resize(1280, 720)
    window.show()

    def pause(ms: int) -> None:
        loop = QEventLoop()
        QTimer.singleShot(ms, loop.quit)
        loop.exec()

    while window.svc is None:
        pause(50)
    pause(1500)
    responses: list[Any] = []
    for q in QUERIES:
        window.search_bar.box.setText(q)
        window.searcher.last_response = None
        window.run_search()
        while window.searcher.last_response is None:
            pause(20)
        responses.append(window.searcher.last_response)
    pause(300)
    painted.clear()
    shown, update = [], []
    for i in range(rounds):
        t0 = time.thread_time()
        window.query_flow._done(responses[i % len(responses)])
        t1 = time.thread_time()
        app.processEvents()  # the update pass: every widget the response changed paints
        t2 = time.thread_time()
        shown.append((t1 - t0) * 1000)
        update.append((t2 - t1) * 1000)
        pause(40)
    window.close()
    shown.sort()
    update.sort()
    top = sorted(painted.items(), key=lambda kv: -kv[1])[:6]
    return {"show_cpu_ms_p50": shown[rounds // 2], "update_cpu_ms_p50": update[rounds // 2],
            "paint_cpu_ms_per_search": {k: v / rounds for k, v in top}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m desktop_memory_bench.window_paint",
                                 description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("db", type=Path, help="the library (an existing database file)")
    ap.add_argument("--embedder", default="hash", choices=("local", "hash"))
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args(argv)
    out = measure(args.db.expanduser().resolve(), args.embedder, max(1, args.rounds))
    print(f"UI thread CPU per search (p50 of {args.rounds}): showing the response {out['show_cpu_ms_p50']:.1f} ms, "
          f"the update pass after it {out['update_cpu_ms_p50']:.1f} ms")
    for name, ms in out["paint_cpu_ms_per_search"].items():
        print(f"  {ms:6.2f} ms  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
