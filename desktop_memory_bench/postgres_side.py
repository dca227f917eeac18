"""The same benchmark on a PostgreSQL library beside the SQLite one, in one run, without re-embedding:
``desktop-memory bench DATASET --postgres URL`` (and ``--scale N --postgres URL``).

The SQLite library the bench built (or reused) is copied into the database at URL by ``desktop-memory copy``'s own
code (library_copy.py: COPY on the server, the HNSW index and the word statistics' key built after the rows; the
insertion rate is reported), then every query runs through the real service on the PostgreSQL library too, and both
stores' tables are printed together. A database that already holds that copy (same documents and passages) is
reused as it is. Standalone, on an index ``bench --db`` built:

    python -m desktop_memory_bench.postgres_side DATASET --sqlite CACHED.db --postgres URL
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop_memory.errors import UserError
from desktop_memory.store.location import is_server_url, redacted

from .pg_insert import timed_copy
from .runner import BenchOptions
from .table import render_table


def check_postgres(url: str) -> None:
    """Before any long work: the URL must name a reachable PostgreSQL database with pgvector that this role may
    write; otherwise one sentence (a UserError: exit code 1)."""
    from desktop_memory.store.open import open_store, server_error

    if not is_server_url(url):
        raise UserError(f"--postgres needs a postgresql:// URL of a database with pgvector, not {url!r}.")
    try:
        store = open_store(url)
    except UserError:
        raise
    except Exception as exc:  # the driver's own error, said in one sentence by the store's translation
        found = server_error(exc, url)
        if found is None:
            raise
        raise found from exc
    store.close()


def copy_into(sqlite_db: Path, url: str, log: Callable[[str], None]) -> dict[str, Any]:
    """The SQLite library into the database at ``url`` (resumed, or skipped when it is already there whole), with
    the time spent and the load average."""
    from desktop_memory.store.open import open_store

    src, dst = open_store(sqlite_db, readonly=True), open_store(url, readonly=True)
    try:
        mine, theirs = src.counts(), dst.counts()
    finally:
        src.close()
        dst.close()
    # (vectors are not compared: the copy collapses passages of identical text, which a synthetic --scale library
    # keeps apart, into copies that share one vector)
    if mine["chunks"] == theirs["chunks"] and mine["by_status"] == theirs["by_status"] \
            and theirs["vectors"] + theirs["duplicates"] >= mine["vectors"]:
        log(f"{redacted(url)} already holds this library ({theirs['chunks']:,} passages): reused")
        return {"passages": 0, "reused": True}
    log(f"copying {mine['chunks']:,} passages into {redacted(url)} …")
    timed = timed_copy(sqlite_db, url)  # copy_library, its writes timed apart (pg_insert.py)
    took, passages = timed["total_s"], timed["passages"]
    rate = passages / took if took else 0.0
    rows = passages / max(timed["write_s"] + timed["vector_s"], 1e-9)
    log(f"copied {passages:,} passages and {timed['vectors']:,} vectors in {took:.1f} s ({rate:,.0f} passages/s, "
        f"indexes included; the rows by COPY {rows:,.0f}/s)")
    return {"passages": passages, "vectors": timed["vectors"], "seconds": took, "passages_per_s": rate,
            "rows_per_s": rows, "load_avg": timed["load"], "reused": False}


def run_side(opts: BenchOptions, sqlite_db: Path, url: str, *, chunk_depth: int, top_k: int,
             log: Callable[[str], None]) -> dict[str, Any]:
    """Copy (or reuse), then every query of the dataset on each backend through the real service on ``url``."""
    from desktop_memory.embed import make_embedder
    from desktop_memory.service import MemoryService

    from .dataset import load_beir
    from .runner import bench_settings, run_backend

    ds = load_beir(opts.dataset, opts.split)
    ds.limit_queries(opts.limit_queries)
    report: dict[str, Any] = {"url": redacted(url), "copy": copy_into(sqlite_db, url, log), "backends": {}}
    settings = bench_settings(opts)
    svc = MemoryService(settings, db_path=url, embedder=make_embedder(settings.embedder))
    try:
        for backend in opts.backends:
            log(f"postgres: {len(ds.queries)} queries with {backend} …")
            res = run_backend(svc, ds, backend, opts, chunk_depth, top_k, log)
            res.pop("_per_query", None)
            report["backends"][backend] = res
    finally:
        svc.close()
    return report


def format_side(sqlite_backends: dict[str, Any], side: dict[str, Any]) -> str:
    """Both stores' quality and latency, one row per store and backend."""
    headers = ["store", "backend", "nDCG@10", "R@100", "MRR@10", "p50 ms", "p95 ms"]
    rows = []
    for backend, pg in side["backends"].items():
        for name, r in (("SQLite", sqlite_backends.get(backend)), ("PostgreSQL", pg)):
            if r is not None:
                rows.append([name, backend, f"{r['ndcg@10']:.4f}", f"{r['recall@100']:.4f}", f"{r['mrr@10']:.4f}",
                             f"{r['p50_ms']:.1f}", f"{r['p95_ms']:.1f}"])
    copy = side["copy"]
    note = (f"PostgreSQL {side['url']}: reused as it was" if copy.get("reused") else
            f"PostgreSQL {side['url']}: {copy['passages']:,} passages copied in {copy['seconds']:.1f} s "
            f"({copy['passages_per_s']:,.0f}/s with the vectors and indexes, the rows by COPY "
            f"{copy.get('rows_per_s', 0):,.0f}/s; load {copy['load_avg']:.1f})")
    return "SQLite beside PostgreSQL (the same library, the same queries, one run)\n" + render_table(headers, rows) \
        + "\n" + note


def main(argv: list[str] | None = None) -> int:
    from .dataset import load_beir
    from .runner import bench_settings

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset", type=Path)
    ap.add_argument("--sqlite", type=Path, required=True, help="the index `desktop-memory bench --db` built")
    ap.add_argument("--postgres", required=True, help="postgresql:// URL of a database with pgvector")
    ap.add_argument("--backends", default="hybrid,keyword")
    ap.add_argument("--limit-queries", type=int, default=None)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    check_postgres(args.postgres)
    opts = BenchOptions(dataset=args.dataset, backends=args.backends.split(","), nonsense=0, log=log,
                        limit_queries=args.limit_queries)
    settings = bench_settings(opts)
    from desktop_memory.embed import make_embedder
    from desktop_memory.service import MemoryService

    from .runner import run_backend

    ds = load_beir(args.dataset, "test")
    ds.limit_queries(args.limit_queries)
    depth = min(4096 // max(1, settings.search.overfetch), max(opts.depth, math.ceil(opts.depth * 2.8 * 2)))
    svc = MemoryService(settings, db_path=args.sqlite, embedder=make_embedder(settings.embedder))
    try:
        mine = {b: run_backend(svc, ds, b, opts, depth, settings.search.top_k, log) for b in opts.backends}
    finally:
        svc.close()
    side = run_side(opts, args.sqlite, args.postgres, chunk_depth=depth, top_k=settings.search.top_k, log=log)
    print(format_side(mine, side))
    if args.out:
        for r in mine.values():
            r.pop("_per_query", None)
        args.out.write_text(json.dumps({"sqlite": mine, "postgres": side}, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


def scale_step(sqlite_db: Path, url: str, queries: list[str], qvecs: Any, settings: Any, embedder: Any,
               backends: tuple[str, ...], log: Callable[[str], None]) -> dict[str, Any]:
    """One ``--scale`` step on PostgreSQL: the step's SQLite library copied in (only what is new since the last
    step), then the same queries on each backend through the real service, and the dense lane's top-10 (HNSW
    once the table has its index) against an exact top-10 over every stored vector."""
    import numpy as np

    from desktop_memory.service import MemoryService
    from desktop_memory.store.open import open_store
    from desktop_memory.store.postgres.store import PgStore

    from .latency import time_searches
    from .scale import exact_topk

    out: dict[str, Any] = {"copy": copy_into(sqlite_db, url, log), "latency": {}}
    svc = MemoryService(settings, db_path=url, embedder=embedder)
    try:
        for backend in backends:
            out["latency"][backend] = time_searches(svc, queries, backend)
    finally:
        svc.close()
    store = open_store(url, readonly=True)
    assert isinstance(store, PgStore)
    try:
        fast = [[cid for cid, _ in store.dense_candidates(q, 10)] for q in qvecs]
        truth = exact_topk(store, qvecs, 10)
        out["chunks"] = store.counts()["chunks"]
        out["db_mb"] = store.db_bytes() / 1048576
    finally:
        store.close()
    out["dense_recall@10"] = float(np.mean([len(set(f) & set(t)) / max(1, len(t)) for f, t in zip(fast, truth)]))
    out["load_avg"] = os.getloadavg()[0]
    lat = out["latency"]
    log(f"  postgres {out['chunks']:,} chunks: " + ", ".join(f"{b} p50 {lat[b]['p50_ms']:.1f} ms" for b in lat)
        + f", recall@10 {out['dense_recall@10']:.4f}")
    return out
