"""Everyday operations at scale (issue 26 item 2): what a person waits for, timed on a big library.

    python -m desktop_memory_bench.everyday shared/eval/scifact --sizes 100000,300000 --work /tmp/everyday

The library is grown the way ``bench --scale`` grows it (scale.py: real chunk texts and vectors of the dataset,
recombined, written through the store's real write path), plus ``--watch-files`` real small files in one folder,
indexed through the app's indexer (no embedding) before the synthetic passages, so the watched folder is part of
the library at every size. At each size a copy of the library is made, and on that copy, each through the app's
own code:

* **window**: a fresh process starts Qt (offscreen), builds the ``MainWindow`` on the library and shows it; timed
  until the window is shown, until its library is open (the window is usable: search, add files), and until the
  Library tab's first screen has rows (its folders: store/doc_listing.py), and until a folder opened then shows
  its first page of files;
* **stats**: ``MemoryService.stats()`` on a freshly opened service (what ``desktop-memory stats`` does);
* **library listing**: ``MemoryService.library_listing`` (the Library's first screen: every folder's summary),
  ``library_page`` (200 files of the biggest folder), and ``documents()`` (every document, what the Library read
  before);
* **watch catch-up**: a ``Watcher`` on the watched folder, from ``start()`` until its first catch-up is done
  (walks the files, compares size and mtime with the index; nothing changed, so nothing is read);
* **remove a folder**: ``remove_paths`` of one synthetic folder (1,000 documents × 10 = 10,000 passages),
  including the secure-delete merge and checkpoint; also when its documents were all gone (the "erase" phase
  starts) and the longest single hold of the writer (how long an edit could wait behind it);
* **check**: ``MemoryService.check()`` (SQLite's quick check and the index's own consistency checks, on a reader);
* **compact**: ``MemoryService.compact()`` (the FTS merge in slices, then VACUUM: rewrites the whole file), and
  its longest writer hold.

``--keep`` reuses the library an earlier run left in ``--work`` (``--grow-only`` builds it and keeps a copy per
size, ``everyday-<size>.db``, which ``--keep`` then measures); ``--no-window`` skips the window probe.

Prints a Markdown table; ``--out`` also writes the JSON report. The load average is recorded with each size.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from desktop_memory.config import EmbedderKind

from .bulk import bulk_write
from .latency import load_average
from .runner import MB, BenchOptions, machine_info
from .scale import CHUNKS_PER_DOC, SynthesisBase, grow

if TYPE_CHECKING:
    from desktop_memory.store import Store

MODEL_DIM = 384  # all-MiniLM-L6-v2, the app's default model
FOLDER_DOCS = 1000  # one synthetic folder: 1,000 documents /synthetic/NNNN/*.txt of 10 passages = 10,000
WINDOW_TIMEOUT_S = 600.0


def make_watched_folder(folder: Path, n: int) -> None:
    """``n`` small text files in folders of 1,000: what a notes or mail-export folder looks like to the walk."""
    for i in range(n):
        sub = folder / f"{i // 1000:03d}"
        if i % 1000 == 0:
            sub.mkdir(parents=True, exist_ok=True)
        (sub / f"note-{i:06d}.txt").write_text(f"Note {i}: a line about topic {i % 97} and item {i * 7919 % 10007}.\n",
                                               encoding="utf-8")


def _timed(fn: Any) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def window_probe(db: Path, settings_dir: Path, embedder: EmbedderKind) -> dict[str, Any]:
    """In this (fresh) process: Qt offscreen, the real MainWindow on ``db``; seconds from this call (the
    interpreter and the harness's own imports, ~0.25 s, come before it) to the imports done, the window built, shown,
    usable (its library open), the Library's first screen (its folder rows), and one folder opened (its first page
    of files, asked for once the first screen is there)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    t0 = time.perf_counter()
    import dataclasses

    from desktop_memory.config import Settings
    from desktop_memory.gui.app import create_app
    from desktop_memory.gui.main_window import MainWindow

    marks: dict[str, float] = {"imports_s": time.perf_counter() - t0}
    app = create_app(["desktop-memory-bench"])
    base = Settings(db_path=str(db))
    settings = dataclasses.replace(base, embedder=dataclasses.replace(base.embedder, kind=embedder))
    window = MainWindow(settings, settings_path=settings_dir / "settings.toml")
    window.resize(1100, 720)
    window.show()
    marks["built_s"] = time.perf_counter() - t0
    opened: list[float] = []
    lib = window.library
    listed: list[bool] = []  # an empty library has no first screen to wait for: its listing arrived, that is all
    window.library_ctl.library_refreshed.connect(lambda: listed.append(True))

    def tick() -> bool:
        now = time.perf_counter() - t0
        handle = window.windowHandle()
        if "shown_s" not in marks and window.isVisible() and handle is not None and handle.isExposed():
            marks["shown_s"] = now
        if "open_s" not in marks and window.svc is not None:
            marks["open_s"] = now
        if "library_s" not in marks and lib.model.rowCount() > 0:
            marks["library_s"] = now
            first = next(iter(lib.model.folder_indexes()), None)
            if first is not None:  # what a person does next: open a folder
                lib.tree.expand(first)
                opened.append(now)
        if "folder_s" not in marks and lib.row_count_visible() > 0:
            marks["folder_s"] = now
            if opened:
                marks["folder_after_first_screen_s"] = now - opened[0]
        if listed and lib.model.document_count() == 0 and "shown_s" in marks and "open_s" in marks:
            return True  # an empty library (`--window NEW.db`: the cold start of a first run)
        return all(k in marks for k in ("shown_s", "open_s", "library_s", "folder_s"))

    deadline = time.perf_counter() + WINDOW_TIMEOUT_S
    while not tick() and time.perf_counter() < deadline:
        app.processEvents()
        time.sleep(0.005)
    rows = lib.row_count_visible()
    window.close()
    app.processEvents()
    return {**marks, "library_rows": rows, "library_top_rows": lib.model.rowCount()}


def operations(db: Path, settings: Any, watched: Path, log: Any, window: bool = True) -> dict[str, Any]:
    """Time each operation on ``db`` (a copy: remove and compact change it) through the app's service."""
    from desktop_memory.service import MemoryService
    from desktop_memory.watch.watcher import Watcher

    from .child import run_module

    out: dict[str, Any] = {}
    out["window"] = {}
    if window:
        log("  window (fresh process, offscreen) …")
        settings_dir = db.parent / "window-settings"
        settings_dir.mkdir(exist_ok=True)
        child_args = ["--window", str(db), "--settings-dir", str(settings_dir), "--embedder", settings.embedder.kind]
        win, err = run_module("desktop_memory_bench.everyday", child_args, timeout_s=WINDOW_TIMEOUT_S + 60)
        out["window"] = win if win is not None else {"error": err.strip()[-300:]}
        log(f"    window: {out['window']}")

    svc = MemoryService(settings, db_path=db)
    try:
        out["stats_s"], stats = _timed(svc.stats)
        out["stats_warm_s"], _ = _timed(svc.stats)
        out["chunks"], out["vectors"] = stats.chunks, stats.vectors
        from desktop_memory.models import LibraryQuery

        out["listing_s"], listing = _timed(lambda: svc.library_listing(LibraryQuery(), {}))
        biggest = max(listing.folders, key=lambda f: f.files)
        out["page_s"], _ = _timed(lambda: svc.library_page(LibraryQuery(), biggest.key, 0, 200))
        out["documents_s"], docs = _timed(svc.documents)
        out["documents"] = len(docs)
        log(f"    stats {out['stats_s']:.2f} s, documents() {out['documents_s']:.2f} s ({len(docs):,} documents)")
        log("  watch catch-up …")
        watcher = Watcher(svc, folders=[str(watched)], embed=False)
        t0 = time.perf_counter()
        watcher.start()
        ready = watcher.ready.wait(600)
        out["watch_catch_up_s"] = time.perf_counter() - t0 if ready else None
        watcher.stop()
        log(f"    watch catch-up {out['watch_catch_up_s']} s")
        first = min(int(Path(d.path).parent.name) for d in docs if d.path.startswith("/synthetic/"))
        folder = f"/synthetic/{first + 1:04d}"  # the first folder with all its documents
        passages = sum(d.chunks for d in docs if d.path.startswith(folder + "/"))
        log(f"  remove {folder} ({passages:,} passages) …")
        holds = _WriterHolds(svc)
        gone: list[float] = []
        t0 = time.perf_counter()

        def removing(p: Any) -> None:  # the documents are all gone (the FTS merge and checkpoint follow)
            if p.phase == "erase" and not gone:
                gone.append(time.perf_counter() - t0)

        out["remove_s"], removed = _timed(lambda: svc.remove_paths([folder], progress=removing))
        out["remove_gone_s"] = gone[0] if gone else out["remove_s"]
        out["remove_max_hold_s"] = holds.take()
        out["removed_documents"], out["removed_passages"] = removed, passages
        log(f"    removed {removed:,} documents in {out['remove_s']:.2f} s (documents gone after "
            f"{out['remove_gone_s']:.2f} s; longest writer hold {out['remove_max_hold_s']:.2f} s)")
        log("  check …")
        out["check_s"], problems = _timed(svc.check)
        out["check_problems"] = len(problems)
        log(f"    check {out['check_s']:.2f} s, {len(problems)} problem(s)")
        log("  compact …")
        out["compact_s"], (before, after) = _timed(svc.compact)
        out["compact_max_hold_s"] = holds.take()
        out["compact_mb"] = [before / MB, after / MB]
        log(f"    compact {out['compact_s']:.2f} s (longest writer hold {out['compact_max_hold_s']:.2f} s)")
        holds.close()
    finally:
        svc.close()
    return out


class _WriterHolds:
    """The longest time one ``svc.writing()`` block held the writer: how long an edit could wait behind it."""

    def __init__(self, svc: Any) -> None:
        import contextlib

        self._svc, self._orig, self.longest = svc, svc.writing, 0.0

        @contextlib.contextmanager
        def timed_writing() -> Any:
            with self._orig() as store:
                t0 = time.perf_counter()
                try:
                    yield store
                finally:
                    self.longest = max(self.longest, time.perf_counter() - t0)

        svc.writing = timed_writing

    def take(self) -> float:
        longest, self.longest = self.longest, 0.0
        return longest

    def close(self) -> None:
        self._svc.writing = self._orig


def run(opts: BenchOptions, sizes: list[int], work: Path, watch_files: int,
        folder_docs: int = FOLDER_DOCS, keep: bool = False, grow_only: bool = False,
        window: bool = True) -> dict[str, Any]:
    from desktop_memory.service import MemoryService

    from .dataset import load_beir

    log = opts.log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    ds = load_beir(opts.dataset, opts.split)
    base = SynthesisBase.load(ds, opts, log)
    if base.dim != MODEL_DIM:  # the hash fake (64-d): project to the real model's size so the file is as large
        rng = np.random.default_rng(0)
        vecs = base.synth.vectors @ rng.normal(size=(base.dim, MODEL_DIM)).astype(np.float32)
        base.synth.vectors = np.ascontiguousarray(vecs / np.linalg.norm(vecs, axis=1, keepdims=True))
        base.dim, base.model_id = MODEL_DIM, f"hash-test-{MODEL_DIM}"
    work.mkdir(parents=True, exist_ok=True)
    db, watched = work / "everyday.db", work / "watched"
    # --keep: grow the library an earlier run built (or measure its per-size copies) instead of starting over
    reuse = keep and (db.exists() or all((work / f"everyday-{t}.db").exists() for t in sizes))
    if not reuse:
        for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            p.unlink(missing_ok=True)
    report: dict[str, Any] = {"mode": "everyday", "machine": machine_info(), "watch_files": watch_files,
                              "steps": []}
    if not watched.is_dir():
        log(f"writing {watch_files:,} files into {watched} …")
        make_watched_folder(watched, watch_files)
    svc = MemoryService(base.settings, db_path=db, embedder=base.embedder)
    try:
        if not reuse:
            log(f"indexing {watched} (no embedding) …")
            t, summary = _timed(lambda: svc.index_paths([watched], embed=False))
            report["watched_index_s"], report["watched_indexed"] = t, summary.indexed
            def synthetic_vectors(store: Store) -> None:  # synthetic like the rest (no model run over 50k notes)
                store.ensure_model(base.model_id, base.dim)
                while batch := store.pending_chunks(256):
                    store.store_vectors([cid for cid, _ in batch], base.synth.batch(len(batch))[1])

            bulk_write(svc, synthetic_vectors)
        for target in sizes:
            snapshot = work / f"everyday-{target}.db"  # --grow-only keeps one per size; --keep measures it
            if not (reuse and snapshot.exists()):
                log(f"growing the library to {target:,} passages …")
                def grown(store: Store, target: int = target) -> None:
                    grow(store, base.synth, target, base.model_id, base.dim, log, folder_docs=folder_docs)
                    store.conn.execute("pragma wal_checkpoint(TRUNCATE)")

                bulk_write(svc, grown)
            if grow_only:
                shutil.copyfile(db, snapshot)
                continue
            copy = work / "ops.db"
            shutil.copyfile(snapshot if reuse and snapshot.exists() else db, copy)
            step = {"target": target, "load_avg_start": load_average(), "db_mb": copy.stat().st_size / MB}
            step.update(operations(copy, base.settings, watched, log, window=window))
            step["load_avg_end"] = load_average()
            for p in copy.parent.glob(copy.name + "*"):
                p.unlink()
            report["steps"].append(step)
            log(f"  {json.dumps(step)}")
    finally:
        svc.close()
    report["machine"]["load_avg_end"] = load_average()
    return report


def _fmt(v: Any) -> str:
    return "–" if v is None else f"{v:.2f}"


def format_table(report: dict[str, Any]) -> str:
    steps = report["steps"]
    head = "| operation | " + " | ".join(f"{s['chunks']:,} passages" for s in steps) + " |"
    lines = [head, "|---|" + "---:|" * len(steps)]

    def row(name: str, get: Any) -> None:
        lines.append(f"| {name} | " + " | ".join(get(s) for s in steps) + " |")

    row("window shown (s)", lambda s: _fmt(s["window"].get("shown_s")))
    row("window usable: library open (s)", lambda s: _fmt(s["window"].get("open_s")))
    row("Library tab first screen (s)", lambda s: _fmt(s["window"].get("library_s")))
    row("Library: a folder opened, its first files (s after the first screen)",
        lambda s: _fmt(s["window"].get("folder_after_first_screen_s")))
    row("`stats` (s)", lambda s: _fmt(s["stats_s"]))
    row("Library listing: folder summaries (s)", lambda s: _fmt(s.get("listing_s")))
    row("Library page: 200 files of the biggest folder (s)", lambda s: _fmt(s.get("page_s")))
    row("every document, `documents()` (s)", lambda s: _fmt(s["documents_s"]))
    row(f"watch start-up catch-up, {report['watch_files']:,} files (s)", lambda s: _fmt(s["watch_catch_up_s"]))
    row("remove a folder (s; its passages)", lambda s: f"{_fmt(s['remove_s'])} ({s['removed_passages']:,})")
    row("… its documents gone from search (s)", lambda s: _fmt(s.get("remove_gone_s")))
    row("… longest writer hold (s)", lambda s: _fmt(s.get("remove_max_hold_s")))
    row("`check` (s; on a reader)", lambda s: _fmt(s["check_s"]))
    row("`compact` (s)", lambda s: _fmt(s["compact_s"]))
    row("… longest writer hold (s)", lambda s: _fmt(s.get("compact_max_hold_s")))
    row("database (MB)", lambda s: f"{s['db_mb']:.0f}")
    row("load average (start / end)", lambda s: " / ".join(f"{(s[k] or [0.0])[0]:.1f}"
                                                           for k in ("load_avg_start", "load_avg_end")))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m desktop_memory_bench.everyday", description=__doc__.splitlines()[0])
    ap.add_argument("dataset", type=Path, nargs="?", help="BEIR folder the synthetic passages come from")
    ap.add_argument("--sizes", default="100000", help="comma list of library sizes in passages")
    ap.add_argument("--work", type=Path, default=Path("everyday-work"), help="folder for the library and files")
    ap.add_argument("--watch-files", type=int, default=50000)
    ap.add_argument("--folder-docs", type=int, default=FOLDER_DOCS,
                    help="documents per synthetic folder (10 passages each): the folder that is removed")
    ap.add_argument("--db", type=Path, default=None, help="the dataset's base index (as bench --db)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--keep", action="store_true",
                    help="reuse the library an earlier run left in --work (grown further to each size)")
    ap.add_argument("--grow-only", action="store_true", help="build/grow the library, time nothing")
    ap.add_argument("--no-window", action="store_true", help="skip the window probe (the other operations only)")
    ap.add_argument("--embedder", choices=("local", "hash"), default="local",
                    help="hash = a meaningless fast fake, to try the harness out (figures then mean nothing)")
    ap.add_argument("--window", type=Path, default=None, help=argparse.SUPPRESS)  # child mode: one window probe
    ap.add_argument("--settings-dir", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.window is not None:
        print(json.dumps(window_probe(args.window, args.settings_dir or args.window.parent, args.embedder)))
        return 0
    if args.dataset is None:
        ap.error("the dataset folder is required")
    opts = BenchOptions(dataset=args.dataset, db=args.db, embedder=args.embedder)
    sizes = [int(float(x)) for x in args.sizes.split(",")]
    if any(n < args.watch_files + 3 * args.folder_docs * CHUNKS_PER_DOC for n in sizes):
        ap.error("each size must leave room for the watched files and two full synthetic folders")
    report = run(opts, sizes, args.work, args.watch_files, args.folder_docs, keep=args.keep,
                 grow_only=args.grow_only, window=not args.no_window)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(format_table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
