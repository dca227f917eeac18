"""Soak benchmark: the real window, thousands of mixed operations, and what the process holds afterwards.

``python -m desktop_memory_bench.soak`` (or ``desktop-memory-gui --soak-bench``) builds the real
:class:`MainWindow` on a temporary library with the real local model (``--embedder hash`` for a quick look),
indexes a first batch of FastAPI docs (the warm-up), then runs ``--ops`` operations in a fixed, seeded mix:

* typing a query key by key (debounced search-as-you-type) and pasting one (immediate search);
* switching the search backend (hybrid / keyword / bm25 / dense), each switch re-searches;
* switching to the Library tab and back; moving through the results;
* excluding / including a result (the context re-packs) and changing the token budget;
* copying the prompt context;
* and, while all that goes on, a second index job and a third one (the Hugo docs) cancelled once it is under way.

Open file descriptors (all, and those on the database files), threads and resident memory are sampled at the
start (after warm-up), every ``--sample-every`` operations and at the end, and printed as a table with the
targets of issue 10: after warm-up, descriptors flat (within ±5) and under 40, threads flat, RSS growth under
100 MB. Everything runs in a temporary folder; offscreen when there is no display. Figures: docs/BENCHMARKS.md.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import json
import os
import random
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from desktop_memory.gui.smoke import _needs_offscreen, isolated_app_dirs

from .eval_data import SHARED_EVAL, missing_data

MDDOCS = SHARED_EVAL / "mddocs"
QUERIES = ("async await concurrency", "path parameters", "dependency injection", "environment variables",
           "request body validation", "security oauth2 tokens", "background tasks", "testing the app",
           "deployment with docker", "response model", "cors middleware", "websockets", "sql databases",
           "query parameter defaults", "file uploads")
OPS = ("type", "paste", "backend", "library", "navigate", "toggle", "budget", "copy")
FD_TARGET, FD_SPREAD, RSS_GROWTH_MB = 40, 5, 100.0
THREAD_SPREAD = 3  # the task pools' worker threads start on demand and expire after 30 s idle (3 + 3 at most)


@dataclass
class Sample:
    label: str
    ops: int
    seconds: float
    fds: int
    db_fds: int
    threads: int
    rss_mb: float


@dataclass
class SoakReport:
    embedder: str
    ops: int = 0
    samples: list[Sample] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # operations done, by kind
    events: list[str] = field(default_factory=list)  # the index jobs and the cancel, with the op they happened at
    searches_timed_out: int = 0
    elapsed_s: float = 0.0

    def after_warmup(self) -> list[Sample]:
        return [s for s in self.samples if s.label != "after close"]

    def checks(self) -> list[tuple[str, str, str, bool]]:
        """(what, measured, target, met) for each target of issue 10."""
        run = self.after_warmup()
        if not run:
            return []
        first, fds, threads = run[0], [s.fds for s in run], [s.threads for s in run]
        spread = max(abs(f - first.fds) for f in fds)
        growth = run[-1].rss_mb - first.rss_mb
        return [
            ("descriptors flat after warm-up", f"{min(fds)}–{max(fds)} (±{spread})", f"±{FD_SPREAD}",
             spread <= FD_SPREAD),
            ("descriptors", f"max {max(fds)}", f"< {FD_TARGET}", max(fds) < FD_TARGET),
            ("threads flat", f"{min(threads)}–{max(threads)} (start {first.threads}, end {run[-1].threads})",
             f"±{THREAD_SPREAD}", max(abs(t - first.threads) for t in threads) <= THREAD_SPREAD),
            ("RSS growth", f"{growth:+.0f} MB", f"< {RSS_GROWTH_MB:.0f} MB", growth < RSS_GROWTH_MB),
        ]

    def table(self) -> str:
        rows = [f"Soak: {self.ops:,} operations on the real window (embedder: {self.embedder}) in "
                f"{self.elapsed_s:.0f} s; " + ", ".join(f"{k} {v:,}" for k, v in self.counts.items()),
                "Jobs: " + "; ".join(self.events),
                "",
                "| point | ops | seconds | open fds | fds on the db | threads | RSS MB |",
                "|---|---:|---:|---:|---:|---:|---:|"]
        rows += [f"| {s.label} | {s.ops:,} | {s.seconds:.0f} | {s.fds} | {s.db_fds} | {s.threads} | {s.rss_mb:.0f} |"
                 for s in self.samples]
        rows += ["", "| target | measured | goal | met |", "|---|---|---|---|"]
        rows += [f"| {a} | {b} | {c} | {'yes' if ok else 'NO'} |" for a, b, c, ok in self.checks()]
        if self.searches_timed_out:
            rows.append(f"\n{self.searches_timed_out} searches did not answer within 30 s")
        return "\n".join(rows)


def process_probe(db: Path) -> tuple[int, int, int, float]:
    """(open fds, fds on the database files, threads, RSS MB) of this process."""
    db_prefix = str(db)
    if os.path.isdir("/proc/self/fd"):
        fds = db_fds = 0
        for fd in os.listdir("/proc/self/fd"):
            try:
                target = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:
                continue  # the descriptor listdir itself used
            fds += 1
            db_fds += target.startswith(db_prefix)
        status = Path("/proc/self/status").read_text()
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        return fds, db_fds, int(fields["Threads"]), int(fields["VmRSS"].split()[0]) / 1024
    import psutil  # other systems: the [bench] extra

    proc = psutil.Process()
    files = [f.path for f in proc.open_files()]
    nfds = proc.num_fds() if hasattr(proc, "num_fds") else proc.num_handles()
    return (nfds, sum(p.startswith(db_prefix) for p in files), proc.num_threads(),
            proc.memory_info().rss / 2**20)


def run_soak(ops: int = 5000, *, embedder: str = "local", sample_every: int = 500, warmup_ops: int = 200,
             corpus: Path = MDDOCS, seed: int = 7,
             log: Callable[[str], None] = lambda m: print(m, file=sys.stderr)) -> SoakReport:
    from PySide6.QtCore import QtMsgType, qInstallMessageHandler

    from desktop_memory.gui.app import create_app

    if _needs_offscreen():
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    app = create_app([sys.argv[0]])

    def quiet(kind: QtMsgType, _ctx: object, msg: str) -> None:  # the offscreen plugin's noise, once per resize
        if "propagateSizeHints" not in msg:
            print(msg, file=sys.stderr)

    previous = qInstallMessageHandler(quiet)
    try:
        with isolated_app_dirs("dm-soak-") as tmp:
            return _run(app, tmp, ops=ops, embedder=embedder, sample_every=sample_every, warmup_ops=warmup_ops,
                        corpus=corpus, seed=seed, log=log)
    finally:
        qInstallMessageHandler(previous)
        gc.unfreeze()


def _batches(corpus: Path) -> tuple[list[str], list[str], list[str]]:
    """Warm-up job, second job, cancelled job: FastAPI docs in two halves, then the 992-file Hugo docs."""
    fastapi = sorted(str(p) for p in (corpus / "fastapi").rglob("*.md"))
    if len(fastapi) < 20:
        raise FileNotFoundError(f"expected the FastAPI docs under {corpus / 'fastapi'}")
    first = fastapi[: len(fastapi) // 3]
    return first, fastapi[len(first): 2 * len(first)], [str(corpus / "hugo")]


def _run(app: Any, tmp: Path, *, ops: int, embedder: str, sample_every: int, warmup_ops: int, corpus: Path,
         seed: int, log: Callable[[str], None]) -> SoakReport:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from desktop_memory.config import Settings
    from desktop_memory.gui.event_pump import pump_events
    from desktop_memory.gui.main_window import MainWindow
    from desktop_memory.service import DEFAULT_READERS, MemoryService

    db = tmp / "soak.db"
    settings = dataclasses.replace(Settings(), db_path=str(db))
    factory = None
    if embedder == "hash":
        def factory(st: Settings) -> Any:
            from desktop_memory.embed.hashing import HashEmbedder
            from desktop_memory.service import MemoryService

            return MemoryService(st, embedder=HashEmbedder(64))
    window = MainWindow(settings, service_factory=factory, settings_path=tmp / "config" / "settings.toml")
    report = SoakReport(embedder=embedder, counts=dict.fromkeys(OPS, 0))
    shown: list[str] = []
    window.search_finished.connect(shown.append)
    window.resize(1200, 800)
    window.show()

    def spin(pred: Callable[[], bool], limit_s: float) -> bool:
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline and not pred():
            pump_events(20)
        return pred()

    if not spin(lambda: window.svc is not None and window.embedder_state != "loading", 300):
        raise RuntimeError(f"the window did not open its library (embedder: {window.embedder_state})")
    gc.freeze()  # as the app does once its window is up (app.main)
    first, second, cancelled = _batches(corpus)
    log(f"window ready (embedder {window.embedder_state}); warm-up: indexing {len(first)} files …")
    window.add_paths(first)
    if not spin(lambda: not window.is_busy() and window.last_summary is not None, 1800):
        raise RuntimeError("the warm-up index job did not finish")
    report.events.append(f"warm-up job: {window.last_summary.indexed if window.last_summary else 0} files")
    rng = random.Random(seed)
    clock = time.monotonic()
    box, view = window.search_bar.box, window.results_view

    def sample(label: str, done: int) -> None:
        pump_events()
        fds, db_fds, threads, rss = process_probe(db)
        report.samples.append(Sample(label, done, time.monotonic() - clock, fds, db_fds, threads, rss))
        log(f"  {label}: {done:,} ops, {fds} fds ({db_fds} on the db), {threads} threads, {rss:.0f} MB")

    def searched(query: str) -> None:
        if not spin(lambda: bool(shown) and shown[-1] == query, 30):
            report.searches_timed_out += 1

    def do(kind: str) -> None:
        q = rng.choice(QUERIES)
        if kind == "type":
            box.clear()
            QTest.keyClicks(box, q)  # debounced: one search for the whole word
            searched(q)
        elif kind == "paste":
            box.setText(q)
            window.search_bar.request_now()
            searched(q)
        elif kind == "backend":
            window.search_bar.cycle_backend()
            if window.search_bar.query():
                searched(window.search_bar.query())
        elif kind == "library":
            window.tabs.setCurrentWidget(window.library)
            pump_events(30)
            window.tabs.setCurrentIndex(0)
        elif kind == "navigate":
            for key in (Qt.Key.Key_Down, Qt.Key.Key_Down, Qt.Key.Key_Up):
                QTest.keyClick(box, key)
        elif kind == "toggle" and window.results_model.rowCount():
            window.actions_.toggle_row(view.currentIndex().row())
            spin(lambda: not window.context.pending, 10)
        elif kind == "budget":
            window.context_panel.budget.setValue(rng.choice((512, 1024, 2048, 4096)))
            spin(lambda: not window.context.pending, 10)
        elif kind == "copy":
            window.copy_context()
            spin(lambda: not window.context.pending, 10)
        report.counts[kind] += 1

    for i in range(warmup_ops):
        do(OPS[i % len(OPS)])
    # the service opens pooled readers on demand, up to its bound (3): lease them all at once here, so the samples
    # after warm-up show leaks, not the pool filling up the first time three queries happen to overlap
    svc = window.svc
    if isinstance(svc, MemoryService):
        with contextlib.ExitStack() as leases:
            for _ in range(DEFAULT_READERS):
                leases.enter_context(svc.reading())
    sample("start (after warm-up)", 0)
    job2_at, job3_at, cancel_after = ops // 5, ops // 2, max(20, ops // 20)
    files_done = [0]
    window.index_jobs.progress.connect(lambda p: files_done.__setitem__(0, p.files_done))
    cancel_pending = False
    for i in range(1, ops + 1):
        if i == job2_at:
            window.add_paths(second)
            report.events.append(f"job 2 ({len(second)} files) at op {i:,}")
        elif i == job3_at:
            spin(lambda: not window.is_busy(), 1800)
            files_done[0] = 0
            window.add_paths(cancelled)
            report.events.append(f"job 3 (Hugo folder) at op {i:,}")
            cancel_pending = True
        elif cancel_pending and (files_done[0] >= 50 or i >= job3_at + cancel_after):
            # cancel once the job is under way: 50 files read (a fast embedder can finish the folder in 20 operations)
            cancel_pending = False
            window.cancel_job()
            spin(lambda: not window.is_busy(), 120)
            summary = window.last_summary
            report.events.append(f"cancelled at op {i:,} ({summary.indexed if summary else 0} files indexed, "
                                 f"cancelled={bool(summary and summary.cancelled)})")
        do(rng.choice(OPS))
        report.ops = i
        if i == ops // 2:
            sample("middle", i)
        elif i % sample_every == 0 and i != ops:
            sample(f"op {i:,}", i)
    spin(lambda: not window.is_busy(), 1800)
    sample("end", ops)
    report.elapsed_s = time.monotonic() - clock
    window.close()
    spin(lambda: window.svc is None, 60)
    window.deleteLater()
    pump_events()
    fds, db_fds, threads, rss = process_probe(db)
    report.samples.append(Sample("after close", ops, time.monotonic() - clock, fds, db_fds, threads, rss))
    return report


def main(argv: list[str]) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m desktop_memory_bench.soak",
                                description="Thousands of mixed operations on the real window; prints open file "
                                            "descriptors, threads and memory at the start, middle and end.")
    p.add_argument("--ops", type=int, default=5000, help="operations after warm-up (default 5,000)")
    p.add_argument("--embedder", choices=("local", "hash"), default="local",
                   help="local = the real bundled model (default); hash = a fast fake, for a quick look")
    p.add_argument("--sample-every", type=int, default=1000, help="also sample every N operations")
    p.add_argument("--corpus", type=Path, default=MDDOCS, help="folder holding fastapi/ and hugo/ (the eval mddocs)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = p.parse_args(argv)
    if not (args.corpus / "fastapi").is_dir():
        print(missing_data(args.corpus / "fastapi", "the FastAPI docs of the eval mddocs; or pass --corpus"),
              file=sys.stderr)
        return 2
    report = run_soak(args.ops, embedder=args.embedder, sample_every=args.sample_every, corpus=args.corpus)
    if args.json:
        print(json.dumps({**asdict(report), "checks": report.checks()}, indent=2))
    else:
        print(report.table())
    return 0 if all(ok for *_, ok in report.checks()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
