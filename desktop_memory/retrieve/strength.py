"""Match strength: is a result a real match, or just the nearest thing to a query the library cannot answer?

Calibration: TO BE FILLED.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import cast

from ..models import LaneHit
from ..store import Store
from .keyword import index_tokens
from .query_text import term_counts

STRONG = "strong"
WEAK = "weak"

K1 = 1.2  # FTS5 bm25()'s k1: a term's contribution never reaches idf * (k1 + 1)

# thresholds (see the module docstring for where they come from)
COS_STRONG = 0.5
COS_WITH_KEYWORDS = 0.35
BM25_STRONG = 0.5
BM25_WITH_DENSE = 0.25


@dataclass(frozen=True)
class LaneScale:
    """Per-query facts that put the lanes' raw scores on a fixed scale."""

    bm25_ceiling: float = 0.0  # what a chunk holding every query term infinitely often would score (0: unknown)


def normalised_bm25(hit: LaneHit | None, scale: LaneScale) -> float:
    """The keyword score as a share of the query's ceiling, in [0, 1); 0 when the lane did not find the chunk."""
    if hit is None or scale.bm25_ceiling <= 0:
        return 0.0
    return max(0.0, min(1.0, hit.score / scale.bm25_ceiling))


def classify(hits: dict[str, LaneHit], scale: LaneScale) -> str:
    """STRONG or WEAK from what the lanes measured for one result."""
    dense = hits.get("dense")
    cos = dense.score if dense is not None else None
    kw = normalised_bm25(hits.get("fts") or hits.get("bm25"), scale)
    if cos is not None and cos >= COS_STRONG:
        return STRONG
    if cos is None:  # keyword-only (keyword backend, or the semantic lane is off)
        return STRONG if kw >= BM25_STRONG else WEAK
    if cos >= COS_WITH_KEYWORDS and kw >= BM25_WITH_DENSE:
        return STRONG
    return WEAK


# ---------------------------------------------------------------- the keyword ceiling

_N_CACHE: dict[tuple[str, int], int] = {}
_N_LOCK = threading.Lock()


def _fts_rows(store: Store) -> int:
    key = (str(store.path), store.content_version())
    with _N_LOCK:
        n = _N_CACHE.get(key)
    if n is None:
        row = store.conn.execute("select count(*) from chunks where dup_of is null").fetchone()
        n = cast(int, row[0]) if row else 0
        with _N_LOCK:
            if len(_N_CACHE) > 16:
                _N_CACHE.clear()
            _N_CACHE[key] = n
    return n


def _doc_freqs(store: Store, stems: list[str]) -> dict[str, int]:
    conn = store.conn
    conn.execute("create virtual table if not exists temp.dm_fts_rows using fts5vocab(main, chunks_fts, 'row')")
    out: dict[str, int] = {}
    for stem in stems:
        row = conn.execute("select doc from temp.dm_fts_rows where term = ?", (stem,)).fetchone()
        out[stem] = cast(int, row[0]) if row else 0
    return out


def lane_scale(store: Store, query: str, lanes: dict[str, list[tuple[int, float]]]) -> LaneScale:
    """The query's keyword ceiling: sum over its query terms (with repeats) of idf * (k1 + 1), FTS5's idf."""
    if not (lanes.get("fts") or lanes.get("bm25")):
        return LaneScale()
    counts = term_counts(query)
    if not counts:
        return LaneScale()
    terms = list(counts)
    stems_of = index_tokens(store, terms)
    weight: dict[str, int] = {}
    for term, stems in zip(terms, stems_of):
        for stem in stems:
            weight[stem] = weight.get(stem, 0) + counts[term]
    n = _fts_rows(store)
    dfs = _doc_freqs(store, list(weight))
    ceiling = 0.0
    for stem, qtf in weight.items():
        df = dfs.get(stem, 0)  # a word no chunk holds counts at full weight: nothing answers that part
        idf = max(1e-6, math.log((n - df + 0.5) / (df + 0.5)))
        ceiling += qtf * idf * (K1 + 1)
    return LaneScale(bm25_ceiling=ceiling)
