"""What "removed means gone" costs: secure delete (SQLite's pragma and FTS5's option) plus a TRUNCATE checkpoint.

    python -m desktop_memory_bench.secure_delete [--docs 10000] [--update 2000] [--small 150] [--modes off,on]

One library of ``--docs`` documents is built once through the store's real write path (``Store.write_document``,
one transaction per document, FTS rows included; real SciFact abstracts, ~3 chunks each, 384-d vectors), then
copied for each mode, where the same work is timed:

- **re-index**: ``--update`` documents replaced by an edited version (``write_document`` on an existing path, what
  the pipeline does for a changed file, without reading or embedding it), then the checkpoint;
- **remove small**: a folder of ``--small`` documents removed through ``MemoryService.remove_paths``, then the
  checkpoint;
- **remove rest**: the other folder (all remaining documents) removed the same way.

In the app's mode (``on``) an operation erases its first ``BULK_ERASE`` documents with FTS5's secure-delete and the
rest with tombstones and one FTS 'optimize' at its end (a folder of more than ``BULK_ERASE``: one transaction).

``left`` counts, after both removals, the removed documents' marker words still in the database files (db + -wal;
the chunk text, and FTS terms where a page starts with one: FTS5 stores terms prefix-compressed, so its leftovers
are undercounted): 0 is the promise. Modes: ``off`` (SQLite's defaults: the app before issue 16), ``pragma`` (only
``PRAGMA secure_delete``), ``fts`` (only FTS5's ``secure-delete``, per document), ``on`` (the app: both, bulk
removal past ``BULK_ERASE`` documents, TRUNCATE checkpoint), ``per-doc`` (the app with FTS5 secure-delete for
every document, no bulk path: slow on big libraries).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from desktop_memory.config import EmbedderSettings, Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.models import ChunkDraft, Location
from desktop_memory.service import MemoryService
from desktop_memory.store import Store, erase

from .bulk import bulk_write
from .eval_data import SHARED_EVAL, missing_data
from .table import render_table

DEFAULT_CORPUS = SHARED_EVAL / "scifact" / "corpus.jsonl"
ROOT = "/bench-library"
DIM = 384
CHUNK_CHARS = 800
MODES = {  # name: (pragma secure_delete, FTS5 secure-delete, checkpoint after, bulk path for folders)
    "off": (0, 0, False, False),
    "pragma": (1, 0, False, False),
    "fts": (0, 1, False, False),
    "on": (1, 1, True, True),
    "per-doc": (1, 1, True, False),
}


def _abstracts(corpus: Path) -> list[str]:
    texts = []
    with open(corpus, encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            text = f"{row.get('title', '')}\n\n{row.get('text', '')}".strip()
            if len(text) > 200:
                texts.append(text)
    return texts


def _chunks(text: str) -> list[ChunkDraft]:
    out, start = [], 0
    while start < len(text):
        end = min(len(text), start + CHUNK_CHARS)
        if end < len(text):
            space = text.rfind(" ", start + CHUNK_CHARS // 2, end)
            end = space if space > start else end
        out.append(ChunkDraft(text[start:end], Location(char_start=start, char_end=end)))
        start = end
    return out


def _doc_text(base: list[str], i: int, version: int = 0) -> str:
    edit = f" Revised note {version}." if version else ""
    return f"docmark{i:05d}x {base[i % len(base)]}{edit}"


def _path(i: int, n_small: int) -> str:
    return f"{ROOT}/{'small' if i < n_small else 'rest'}/doc{i:05d}.md"


def _write(store: Store, base: list[str], i: int, n_small: int, version: int = 0) -> None:
    chunks = _chunks(_doc_text(base, i, version))
    keys = [hashlib.blake2b(c.text.encode(), digest_size=12).hexdigest() for c in chunks]
    store.write_document(path=_path(i, n_small), kind="text", language=None, title=None, size=1000,
                         mtime=float(version), content_hash=f"{i}-{version}", chunks=chunks, dedupe_keys=keys)


def build(db: Path, base: list[str], n_docs: int, n_small: int) -> tuple[float, int]:
    """The shared starting library: documents, FTS rows and vectors. Returns (seconds, chunks)."""
    t0 = time.perf_counter()
    store = Store(db)
    try:
        store.ensure_model("bench", DIM)
        for i in range(n_docs):
            _write(store, base, i, n_small)
        rng = np.random.default_rng(0)
        while True:
            pending = store.pending_chunks(256)
            if not pending:
                break
            vecs = rng.normal(size=(len(pending), DIM)).astype(np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            store.store_vectors([cid for cid, _ in pending], vecs)
        chunks = store.counts()["chunks"]
        store.checkpoint()
    finally:
        store.close()
    return time.perf_counter() - t0, chunks


def _left(db: Path) -> int:
    """Marker words of removed documents still on disk (a 5-digit id after 'docmark'; FTS5 keeps terms whole)."""
    total = 0
    for suffix in ("", "-wal"):
        path = Path(f"{db}{suffix}")
        if path.exists():
            total += path.read_bytes().count(b"docmark")
    return total


def run_mode(db: Path, base: list[str], mode: str, n_docs: int, n_update: int, n_small: int) -> dict[str, float]:
    pragma, fts, checkpoint, bulk = MODES[mode]
    settings = Settings(embedder=EmbedderSettings(kind="hash"))
    svc = MemoryService(settings, db_path=db, embedder=HashEmbedder(DIM))
    saved_bulk = erase.BULK_ERASE
    try:
        out: dict[str, float] = {}

        def set_up_and_update(store: Store) -> None:  # the writer's pragmas (and patched method) stay for the removals
            store.conn.execute(f"pragma secure_delete={pragma}")
            with store.conn:
                store.conn.execute(f"insert into chunks_fts(chunks_fts, rank) values('secure-delete', {fts})")
            if not checkpoint:
                # [method-assign]: the benchmark replaces the method on purpose, to measure the app before issue 16
                store.checkpoint_erased = lambda: True  # type: ignore[method-assign]
            if not bulk:
                erase.BULK_ERASE = 1 << 30
            t0 = time.perf_counter()
            for i in range(0, n_docs, max(1, n_docs // n_update))[:n_update]:
                _write(store, base, i, n_small, version=1)
            store.checkpoint_erased()
            out["update_s"] = time.perf_counter() - t0

        bulk_write(svc, set_up_and_update)
        for part, count in (("small", n_small), ("rest", n_docs - n_small)):  # jobs on the scheduler's writer lane
            t0 = time.perf_counter()
            removed = svc.remove_paths([f"{ROOT}/{part}"])
            out[f"{part}_s"] = time.perf_counter() - t0
            assert removed == count, (part, removed, count)
        out["left"] = _left(db)
        files = [Path(f"{db}{s}") for s in ("", "-wal")]
        out["files_mb"] = sum(f.stat().st_size for f in files if f.exists()) / 1e6
    finally:
        erase.BULK_ERASE = saved_bulk
        svc.close()
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m desktop_memory_bench.secure_delete", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--docs", type=int, default=10_000)
    p.add_argument("--update", type=int, default=2_000, help="changed documents to re-index")
    p.add_argument("--small", type=int, default=150, help="documents in the small folder removed first")
    p.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="SciFact corpus.jsonl")
    p.add_argument("--modes", default="off,pragma,on", help="comma-separated: " + ", ".join(MODES) +
                   " (fts and per-doc take minutes on 10,000 documents)")
    args = p.parse_args(argv)
    if not args.corpus.is_file():
        print(missing_data(args.corpus, "the SciFact corpus; or pass --corpus"), file=sys.stderr)
        return 2
    base = _abstracts(args.corpus)
    n_small = min(args.small, args.docs // 2)
    with tempfile.TemporaryDirectory(prefix="dm-secure-delete-") as tmp:
        seed = Path(tmp) / "seed.db"
        build_s, chunks = build(seed, base, args.docs, n_small)
        print(f"library: {args.docs} documents, {chunks} chunks with {DIM}-d vectors, "
              f"{seed.stat().st_size / 1e6:.1f} MB (built in {build_s:.1f} s)", file=sys.stderr)
        rows = []
        for mode in args.modes.split(","):
            db = Path(tmp) / f"{mode}.db"
            shutil.copyfile(seed, db)
            r = run_mode(db, base, mode, args.docs, args.update, n_small)
            rest = args.docs - n_small
            rows.append([mode, f"{r['update_s']:.1f}", f"{1000 * r['update_s'] / args.update:.1f}",
                         f"{r['small_s']:.2f}", f"{1000 * r['small_s'] / n_small:.1f}",
                         f"{r['rest_s']:.1f}", f"{1000 * r['rest_s'] / rest:.2f}", str(int(r["left"])),
                         f"{r['files_mb']:.1f}"])
            print(f"  {mode}: done", file=sys.stderr)
            db.unlink()
    print(f"secure delete: re-index {args.update} changed documents, remove a folder of {n_small}, then a folder of "
          f"{args.docs - n_small} ({args.docs} documents, {chunks} chunks, {DIM}-d vectors)")
    print(render_table(["mode", "re-index s", "ms/doc", f"rm {n_small} s", "ms/doc", f"rm {args.docs - n_small} s",
                        "ms/doc", "left", "db+wal MB"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
