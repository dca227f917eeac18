"""The semantic lane on pgvector: cosine distance (``<=>``) on the active model's table, score = 1 - distance
(the cosine of two unit vectors, the same raw score as the SQLite lane's exact re-scoring: retrieve/dense.py).

A library of fewer than ``EXACT_BELOW`` vectors (it has no HNSW index yet: vectors.py ``INDEX_FROM``), or a
filtered search, is searched exactly (a scan: at that size it takes milliseconds, and a filter after an
approximate search could leave fewer than ``limit`` results); otherwise the HNSW index answers with
``hnsw.ef_search`` = max(EF_SEARCH, limit) candidates examined
(docs/BENCHMARKS.md, "PostgreSQL": recall@10 against exact at that setting).
"""

from __future__ import annotations

import numpy as np

from ...models import SearchFilters
from .filters import allowed_ids_sql
from .schema import Conn
from .vectors import INDEX_FROM, PgVectors, vector_text

EXACT_BELOW = INDEX_FROM
# recall@10 at 1M, one graph: 0.9555 at 400, 0.976 at 800 (+6 ms p50); graphs built alike gave 0.939–0.961 at 400:
# docs/BENCHMARKS.md, "PostgreSQL: vectors with their passages"
EF_SEARCH = 800


def dense_candidates(conn: Conn, vectors: PgVectors, query_vec: np.ndarray, limit: int,
                     filters: SearchFilters | None = None, exact: bool = False) -> list[tuple[int, float]]:
    """(chunk id, cosine) of the ``limit`` nearest canonical chunks, best first, ties by id."""
    table = vectors.table()
    if table is None or limit <= 0:
        return []
    query = vector_text(np.asarray(query_vec, dtype=np.float32).reshape(-1))
    where, params = allowed_ids_sql(filters)
    if not exact and not where:
        est = conn.execute("select reltuples from pg_class where oid = %s::regclass", (table,)).fetchone()
        exact = est is None or float(str(est[0])) < EXACT_BELOW
    cond = f" where v.id in ({where})" if where else ""
    with conn.transaction():
        if exact:
            conn.execute("set local enable_indexscan = off")
        else:
            conn.execute("select set_config('hnsw.ef_search', %s, true)", (str(max(EF_SEARCH, int(limit))),))
        rows = conn.execute(
            f"select v.id, v.embedding <=> %s::vector as d from {table} v{cond} order by d limit %s",
            (query, *params, int(limit))).fetchall()
    ranked = [(int(str(cid)), 1.0 - float(str(d))) for cid, d in rows]
    ranked.sort(key=lambda x: (-x[1], x[0]))
    return ranked
