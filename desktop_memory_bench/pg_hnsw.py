"""HNSW against exact on a PostgreSQL library's active vectors: recall@10 and latency per ``hnsw.ef_search``.

    python -m desktop_memory_bench.pg_hnsw URL [--queries 200]

Builds the HNSW index on the active model's table if it has none (and drops it again afterwards when it built it),
then asks 200 queries (stored vectors with a little noise, unit length) of ``dense_candidates`` and
``dense_exact_candidates`` (store/postgres/dense.py) at ef_search 40, 100 and 200.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from desktop_memory.store.open import open_store
from desktop_memory.store.postgres import dense
from desktop_memory.store.postgres.store import PgStore


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("url")
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args(argv)
    store = open_store(args.url)
    assert isinstance(store, PgStore), "a postgresql:// URL"
    table = store.vectors.table()
    assert table is not None, "the library has no vectors"
    built = not store.conn.execute("select 1 from pg_indexes where indexname = %s", (f"{table}_hnsw",)).fetchone()
    t0 = time.perf_counter()
    store.conn.execute(f"create index if not exists {table}_hnsw on {table} using hnsw (embedding vector_cosine_ops)")
    store.conn.execute(f"analyze {table}")
    print(f"HNSW index on {store.vectors.count():,} vectors: {time.perf_counter() - t0:.1f} s"
          + ("" if built else " (it existed)"))
    dense.EXACT_BELOW = 0  # always the index for this measurement
    _, vecs = next(store.iter_vectors(block=1_000_000))
    rng = np.random.default_rng(0)
    qs = vecs[rng.choice(len(vecs), min(args.queries, len(vecs)), replace=False)]
    qs = qs + rng.normal(scale=0.05, size=qs.shape).astype(np.float32)
    qs /= np.linalg.norm(qs, axis=1, keepdims=True)
    try:
        for ef in (40, 100, 200):
            dense.EF_SEARCH = ef
            recall, fast_ms, exact_ms = [], [], []
            for q in qs:
                t = time.perf_counter()
                fast = {c for c, _ in store.dense_candidates(q, 10)}
                fast_ms.append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                exact = {c for c, _ in store.dense_exact_candidates(q, 10)}
                exact_ms.append((time.perf_counter() - t) * 1000)
                recall.append(len(fast & exact) / 10)
            print(f"ef_search {ef}: recall@10 {np.mean(recall):.3f} · HNSW p50 {np.median(fast_ms):.1f} ms · "
                  f"exact p50 {np.median(exact_ms):.1f} ms")
    finally:
        if built:
            store.conn.execute(f"drop index {table}_hnsw")
        store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
