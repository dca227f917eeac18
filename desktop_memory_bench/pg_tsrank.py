"""The keyword lane on a PostgreSQL library ranked by ``ts_rank`` / ``ts_rank_cd`` instead of BM25: the measurement
behind choosing BM25 in SQL (store/postgres/keyword.py; docs/BENCHMARKS.md, "PostgreSQL library beside SQLite").

    python -m desktop_memory_bench.pg_tsrank DATASET URL ts_rank|ts_rank_cd

URL: a library holding DATASET (e.g. made by ``desktop_memory_bench.postgres_side``). Only this process's
``fts_match`` is replaced: every chunk whose tsvector matches the query's OR of phrases, ranked by the function.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.store.postgres import reads
from desktop_memory.store.postgres.keyword import phrases

from .dataset import load_beir
from .runner import BenchOptions, bench_settings, run_backend


def main(argv: list[str] | None = None) -> int:
    from desktop_memory.service import MemoryService

    dataset, url, fn = (argv or sys.argv[1:])[:3]
    if fn not in ("ts_rank", "ts_rank_cd"):
        raise SystemExit("the ranking function must be ts_rank or ts_rank_cd")

    def fts_match(self: reads.PgSearchReads, table: str, expr: str, limit: int,
                  filters: Any) -> list[tuple[int, float]]:
        texts = [t for t in phrases(expr) if t.strip()]
        if table != "chunks_fts" or not texts:
            return []
        query = " || ".join("phraseto_tsquery('dm_text', %s)" for _ in texts)
        rows = self.conn.execute(f"with q as (select {query} as q) select c.id, {fn}(c.tsv, q.q) as r "
                                 "from chunks c, q where c.tsv @@ q.q order by r desc, c.id limit %s",
                                 [*texts, int(limit)]).fetchall()
        return [(int(a), float(b)) for a, b in rows]

    reads.PgSearchReads.fts_match = fts_match  # type: ignore[method-assign]
    opts = BenchOptions(dataset=Path(dataset), backends=["keyword"], nonsense=0, log=print)
    settings = bench_settings(opts)
    ds = load_beir(opts.dataset, "test")
    svc = MemoryService(settings, db_path=url, embedder=HashEmbedder(8))
    try:
        chunks = svc.stats().chunks
        depth = min(4096 // max(1, settings.search.overfetch), max(100, math.ceil(100 * chunks / len(ds.corpus) * 2)))
        run_backend(svc, ds, "keyword", opts, depth, settings.search.top_k, print)
    finally:
        svc.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
