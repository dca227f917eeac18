"""SciFact (or any BEIR folder) on a PostgreSQL library beside the SQLite one, without re-embedding.

    python -m desktop_memory_bench.postgres_side ../shared/eval/scifact --sqlite CACHED.db --postgres URL

``CACHED.db`` is the index ``desktop-memory bench DATASET --db CACHED.db`` built (same settings): its documents,
chunks and vectors are copied into the (empty) PostgreSQL database at URL through the stores' own methods (COPY on
the server side: the insertion rate is reported), then every query runs through the real service on BOTH
libraries, one after the other in this process, and the quality and latency tables are printed side by side.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from desktop_memory.chunking.dedupe import chunk_key
from desktop_memory.embed import make_embedder
from desktop_memory.models import ChunkDraft
from desktop_memory.store.doc_writes import DocumentWrite
from desktop_memory.store.location import redacted
from desktop_memory.store.open import open_store
from desktop_memory.store.protocol import LibraryStore

from .dataset import load_beir
from .runner import BenchOptions, bench_settings, run_backend

BLOCK = 2000  # chunk ids read per request


def copy_library(src: LibraryStore, dst: LibraryStore, log: Any) -> dict[str, float]:
    """Every document, chunk and vector of ``src`` into the empty ``dst`` (the vectors of the active model)."""
    t0 = time.perf_counter()
    lo, hi = src.reads.chunk_id_span()
    by_doc: dict[str, list[ChunkDraft]] = defaultdict(list)
    kinds: dict[str, str] = {}
    for start in range(lo, hi + 1, BLOCK):
        rows = src.reads.chunk_rows(list(range(start, min(hi, start + BLOCK - 1) + 1)))
        for cid in sorted(rows):
            row = rows[cid]
            by_doc[row.path].append(ChunkDraft(row.text, row.location()))
            kinds[row.path] = row.kind
    read_s = time.perf_counter() - t0
    docs: list[DocumentWrite] = []
    for path, chunks in by_doc.items():
        info = src.get_document(path)
        assert info is not None
        docs.append(DocumentWrite(path=path, kind=kinds[path], language=None, title=None, size=info.size,
                                  mtime=info.mtime, content_hash=info.content_hash, chunks=chunks,
                                  dedupe_keys=[chunk_key(c) for c in chunks]))
    t1 = time.perf_counter()
    for start in range(0, len(docs), 200):
        dst.write_documents(docs[start:start + 200])
    write_s = time.perf_counter() - t1
    passages = sum(len(d.chunks) for d in docs)
    log(f"copied {len(docs)} documents, {passages} passages in {write_s:.1f} s ({passages / write_s:,.0f}/s)")
    model, dim = src.model_info()
    vec_s = 0.0
    vectors = 0
    if model is not None and dim is not None:
        dst.ensure_model(model, dim)
        where: dict[tuple[str, str], int] = {}
        after = 0
        while True:
            pending = dst.pending_chunks(BLOCK, after)
            if not pending:
                break
            after = pending[-1][0]
            rows = dst.reads.chunk_rows([cid for cid, _ in pending])
            where.update({(rows[cid].path, text): cid for cid, text in pending})
        t2 = time.perf_counter()
        for ids, block in src.iter_vectors():
            rows = src.reads.chunk_rows([int(i) for i in ids])
            keep = [(where[(rows[int(i)].path, rows[int(i)].text)], v, rows[int(i)].text)
                    for i, v in zip(ids, block) if (rows[int(i)].path, rows[int(i)].text) in where]
            if keep:
                vectors += dst.store_vectors([k[0] for k in keep], np.stack([k[1] for k in keep]),
                                             [k[2] for k in keep])
        vec_s = time.perf_counter() - t2
        log(f"copied {vectors} vectors in {vec_s:.1f} s ({vectors / max(vec_s, 1e-9):,.0f}/s)")
    return {"read_s": read_s, "passages": passages, "passage_write_s": write_s, "passages_per_s": passages / write_s,
            "vectors": vectors, "vector_write_s": vec_s, "vectors_per_s": vectors / max(vec_s, 1e-9)}


def main(argv: list[str] | None = None) -> int:
    from desktop_memory.service import MemoryService

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset", type=Path)
    ap.add_argument("--sqlite", type=Path, required=True, help="the index `desktop-memory bench --db` built")
    ap.add_argument("--postgres", required=True, help="postgresql:// URL of an empty database with pgvector")
    ap.add_argument("--backends", default="hybrid,keyword")
    ap.add_argument("--limit-queries", type=int, default=None)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    opts = BenchOptions(dataset=args.dataset, backends=args.backends.split(","), nonsense=0, log=log)
    settings = bench_settings(opts)
    embedder = make_embedder(settings.embedder)
    ds = load_beir(args.dataset, "test")
    ds.limit_queries(args.limit_queries)
    report: dict[str, Any] = {"dataset": ds.name, "postgres_url": redacted(args.postgres)}
    src, dst = open_store(args.sqlite, readonly=True), open_store(args.postgres)
    try:
        if dst.counts()["chunks"] == 0:
            report["copy"] = copy_library(src, dst, log)
        chunks = src.counts()["chunks"]
    finally:
        src.close()
        dst.close()
    ratio = chunks / max(1, len(ds.corpus))
    chunk_depth = min(4096 // max(1, settings.search.overfetch), max(opts.depth, math.ceil(opts.depth * ratio * 2)))
    for name, location in (("sqlite", str(args.sqlite)), ("postgres", args.postgres)):
        svc = MemoryService(settings, db_path=location, embedder=embedder)
        try:
            for backend in opts.backends:
                log(f"{name}: {len(ds.queries)} queries with {backend} …")
                res = run_backend(svc, ds, backend, opts, chunk_depth, settings.search.top_k, log)
                res.pop("_per_query", None)
                report.setdefault(name, {})[backend] = res
        finally:
            svc.close()
    print("store     backend  nDCG@10   R@100  MRR@10  p50 ms  p95 ms")
    for name in ("sqlite", "postgres"):
        for backend, r in report[name].items():
            print(f"{name:9} {backend:8} {r['ndcg@10']:7.4f}  {r['recall@100']:6.4f}  {r['mrr@10']:6.4f}  "
                  f"{r['p50_ms']:6.1f}  {r['p95_ms']:6.1f}")
    if args.out:
        args.out.write_text(json.dumps(report, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
