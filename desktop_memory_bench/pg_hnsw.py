"""HNSW against exact on a PostgreSQL library's active vectors: the index build, then recall@10 and latency per
``hnsw.ef_search``.

    python -m desktop_memory_bench.pg_hnsw URL [--queries 200] [--m 16 --ef-construction 64] [--keep]
        [--ef 40,100,200] [--dataset ../shared/eval/scifact] [--rebuild N]

Builds the HNSW index on the active model's table if it has none (timed, with the server's
``maintenance_work_mem`` and parallel maintenance workers; dropped again afterwards unless ``--keep``), then asks
the queries (stored vectors with a little noise, unit length) of ``dense_candidates`` at each ef_search; the
exact top-10 is numpy's over every stored vector (one pass), timed against pgvector's exact scan on a sample.
``--dataset``: the dataset's first test queries embedded by the default model instead (what ``bench --scale``
asks). ``--rebuild N``: the table printed again after each of N ``REINDEX``es — pgvector's parallel build is not
deterministic, and graphs of the same vectors differ in recall.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from desktop_memory.store.open import open_store
from desktop_memory.store.postgres import dense
from desktop_memory.store.postgres.store import PgStore

from .scale import exact_topk

EXACT_TIMED = 10


def _dataset_queries(dataset: Path, n: int) -> np.ndarray:
    """The first ``n`` test queries of a BEIR dataset, embedded by the default model (as ``bench --scale``)."""
    from desktop_memory.config import Settings
    from desktop_memory.embed import make_embedder

    from .dataset import load_beir

    ds = load_beir(dataset, "test")
    ds.limit_queries(n)
    embedder = make_embedder(Settings().embedder)
    embedder.load()
    return np.stack([embedder.embed_query(q) for q in ds.queries.values()]).astype(np.float32)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("url")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--m", type=int, default=16, help="HNSW m of a new index (pgvector's default 16)")
    ap.add_argument("--ef-construction", type=int, default=64, help="of a new index (pgvector's default 64)")
    ap.add_argument("--ef", default="40,100,200", help="hnsw.ef_search values to measure")
    ap.add_argument("--keep", action="store_true", help="keep an index this run built")
    ap.add_argument("--dataset", type=Path, help="a BEIR dataset: its test queries, embedded by the default model")
    ap.add_argument("--rebuild", type=int, default=0, help="REINDEX this many times, measuring each graph")
    args = ap.parse_args(argv)
    store = open_store(args.url)
    assert isinstance(store, PgStore), "a postgresql:// URL"
    table = store.vectors.table()
    assert table is not None, "the library has no vectors"
    built = not store.conn.execute("select 1 from pg_indexes where indexname = %s", (f"{table}_hnsw",)).fetchone()
    settings: dict[str, str] = dict(store.conn.execute(
        "select name, setting || coalesce(unit, '') from pg_settings where name in "
        "('maintenance_work_mem', 'max_parallel_maintenance_workers')").fetchall())
    t0, load0 = time.perf_counter(), os.getloadavg()[0]
    if built:
        store.conn.execute(f"create index {table}_hnsw on {table} using hnsw (embedding vector_cosine_ops) "
                           f"with (m = {int(args.m)}, ef_construction = {int(args.ef_construction)})")
    store.conn.execute(f"analyze {table}")
    n = store.vectors.count()
    print(f"HNSW index on {n:,} vectors: " + (
        f"built in {time.perf_counter() - t0:.1f} s (m {args.m}, ef_construction {args.ef_construction}, "
        f"{settings}, load {(load0 + os.getloadavg()[0]) / 2:.1f})" if built else "it existed"), flush=True)
    dense.EXACT_BELOW = 0  # always the index for this measurement
    rng = np.random.default_rng(0)
    pick = sorted(rng.choice(n, min(args.queries, n), replace=False).tolist())
    ids = store.conn.execute(f"select id from {table} order by id").fetchall()
    chosen = [int(str(ids[i][0])) for i in pick]
    del ids
    _, vecs = next(store.iter_vectors(block=len(chosen), ids=chosen))
    qs = vecs + rng.normal(scale=0.05, size=vecs.shape).astype(np.float32)
    qs /= np.linalg.norm(qs, axis=1, keepdims=True)
    if args.dataset is not None:
        qs = _dataset_queries(args.dataset, args.queries)
    t0 = time.perf_counter()
    truth = exact_topk(store, qs, 10)
    print(f"exact top-10 of {len(qs)} queries by numpy over every vector: {time.perf_counter() - t0:.1f} s",
          flush=True)
    exact_ms = []
    for q in qs[:EXACT_TIMED]:
        t = time.perf_counter()
        store.dense_exact_candidates(q, 10)
        exact_ms.append((time.perf_counter() - t) * 1000)
    try:
        for graph in range(args.rebuild + 1):
            if graph:
                t0 = time.perf_counter()
                store.conn.execute(f"reindex index {table}_hnsw")
                print(f"rebuilt ({graph} of {args.rebuild}) in {time.perf_counter() - t0:.1f} s", flush=True)
            print("| ef_search | recall@10 vs exact | HNSW p50 ms | HNSW p95 ms | exact scan p50 ms |")
            print("|---:|---:|---:|---:|---:|")
            for ef in (int(x) for x in args.ef.split(",")):
                dense.EF_SEARCH = ef
                recall, fast_ms = [], []
                for q, exact in zip(qs, truth):
                    t = time.perf_counter()
                    fast = {c for c, _ in store.dense_candidates(q, 10)}
                    fast_ms.append((time.perf_counter() - t) * 1000)
                    recall.append(len(fast & set(exact)) / len(exact))
                print(f"| {ef} | {np.mean(recall):.4f} | {np.median(fast_ms):.1f} | "
                      f"{np.percentile(fast_ms, 95):.1f} | {np.median(exact_ms):.1f} |", flush=True)
        print(f"load {os.getloadavg()[0]:.1f}")
    finally:
        if built and not args.keep:
            store.conn.execute(f"drop index {table}_hnsw")
        store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
