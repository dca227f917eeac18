"""What "removed means gone" costs: secure delete (SQLite's pragma and FTS5's option) plus a TRUNCATE checkpoint.

    python -m desktop_memory_bench.secure_delete [--docs 10000] [--update 2000] [--corpus PATH]

One library of ``--docs`` documents is built once through the store's real write path (``Store.write_document``,
one transaction per document, FTS rows included; real SciFact abstracts, ~3 chunks each, 384-d vectors), then
copied for each mode, where the same work is timed:

- **re-index**: ``--update`` documents replaced by an edited version (``write_document`` on an existing path, what
  the pipeline does for a changed file, without reading or embedding it), then the checkpoint;
- **remove**: every document removed through ``MemoryService.remove_paths`` on the folder (one transaction per
  document, then the checkpoint).

``left`` counts, after the removal, how many of the removed documents' marker words are still in the database
files (db + -wal): 0 is the promise. Modes: ``off`` (SQLite's defaults: what the app did before), ``pragma``
(only ``PRAGMA secure_delete``), ``fts`` (only FTS5's ``secure-delete``), ``on`` (both, and the checkpoint: the app).
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
from desktop_memory.store import Store

from .table import render_table

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "eval" / "scifact" / "corpus.jsonl"
ROOT = "/bench-library"
DIM = 384
CHUNK_CHARS = 800
MODES = {  # name: (pragma secure_delete, FTS5 secure-delete, checkpoint after)
    "off": (0, 0, False),
    "pragma": (1, 0, False),
    "fts": (0, 1, False),
    "on": (1, 1, True),
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


def _write(store: Store, base: list[str], i: int, version: int = 0) -> None:
    chunks = _chunks(_doc_text(base, i, version))
    keys = [hashlib.blake2b(c.text.encode(), digest_size=12).hexdigest() for c in chunks]
    store.write_document(path=f"{ROOT}/doc{i:05d}.md", kind="text", language=None, title=None, size=1000,
                         mtime=float(version), content_hash=f"{i}-{version}", chunks=chunks, dedupe_keys=keys)


def build(db: Path, base: list[str], n_docs: int) -> tuple[float, int]:
    """The shared starting library: documents, FTS rows and vectors. Returns (seconds, chunks)."""
    t0 = time.perf_counter()
    store = Store(db)
    try:
        store.ensure_model("bench", DIM)
        for i in range(n_docs):
            _write(store, base, i)
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


def run_mode(db: Path, base: list[str], mode: str, n_docs: int, n_update: int) -> dict[str, float]:
    pragma, fts, checkpoint = MODES[mode]
    settings = Settings()
    settings.embedder = EmbedderSettings(kind="hash")
    svc = MemoryService(settings, db_path=db, embedder=HashEmbedder(DIM))
    try:
        store = svc.store
        store.conn.execute(f"pragma secure_delete={pragma}")
        with store.conn:
            store.conn.execute(f"insert into chunks_fts(chunks_fts, rank) values('secure-delete', {fts})")
        if not checkpoint:
            store.checkpoint_erased = lambda: True  # type: ignore[method-assign]  # the app before issue 16
        t0 = time.perf_counter()
        for i in range(0, n_docs, max(1, n_docs // n_update))[:n_update]:
            _write(store, base, i, version=1)
        store.checkpoint_erased()
        update_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        removed = svc.remove_paths([ROOT])
        remove_s = time.perf_counter() - t0
        assert removed == n_docs, removed
        left = _left(db)
        sizes = sum(Path(f"{db}{s}").stat().st_size for s in ("", "-wal") if Path(f"{db}{s}").exists())
    finally:
        svc.close()
    return {"update_s": update_s, "update_ms_doc": 1000 * update_s / n_update, "remove_s": remove_s,
            "remove_ms_doc": 1000 * remove_s / n_docs, "left": left, "files_mb": sizes / 1e6}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m desktop_memory_bench.secure_delete", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--docs", type=int, default=10_000)
    p.add_argument("--update", type=int, default=2_000)
    p.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="SciFact corpus.jsonl")
    p.add_argument("--modes", default=",".join(MODES), help="comma-separated: " + ", ".join(MODES))
    args = p.parse_args(argv)
    base = _abstracts(args.corpus)
    with tempfile.TemporaryDirectory(prefix="dm-secure-delete-") as tmp:
        seed = Path(tmp) / "seed.db"
        build_s, chunks = build(seed, base, args.docs)
        print(f"library: {args.docs} documents, {chunks} chunks with {DIM}-d vectors, "
              f"{seed.stat().st_size / 1e6:.1f} MB (built in {build_s:.1f} s)", file=sys.stderr)
        rows = []
        for mode in args.modes.split(","):
            db = Path(tmp) / f"{mode}.db"
            shutil.copyfile(seed, db)
            r = run_mode(db, base, mode, args.docs, args.update)
            rows.append([mode, f"{r['update_s']:.2f}", f"{r['update_ms_doc']:.2f}", f"{r['remove_s']:.2f}",
                         f"{r['remove_ms_doc']:.2f}", str(int(r["left"])), f"{r['files_mb']:.1f}"])
            print(f"  {mode}: done", file=sys.stderr)
    print(f"secure delete: re-index {args.update} changed documents, then remove all {args.docs} "
          f"({chunks} chunks)")
    print(render_table(["mode", "re-index s", "ms/doc", "remove s", "ms/doc", "left", "db+wal MB"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
