"""The score a result card shows: the one that ordered the list, with as many digits as tell neighbours apart.

With a reranker on, the list is in the reranker's order, so the card shows the rerank score (not the fused RRF
score, which then looks unsorted: "#1 0.0145, #2 0.0159"). RRF scores are tiny when rrf_k is large (k = 100000:
2/100001 ≈ 0.0000199996), so a fixed four decimals shows "0.0000" on every row: the decimals grow until the first
three significant digits show and two neighbouring rows with different scores read differently.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..models import SearchResult

RERANK = "rerank"
MIN_DECIMALS = 4
MAX_DECIMALS = 12
SIGNIFICANT = 3


def ordering_score(r: SearchResult) -> tuple[float, str]:
    """(score, what it is): the reranker's score when it ranked this result, else the fused score."""
    hit = r.lanes.get(RERANK)
    return (hit.score, "rerank score") if hit is not None else (r.score, "fused score")


def _decimals(values: Sequence[float]) -> int:
    finite = [abs(v) for v in values if math.isfinite(v)]
    top = max((v for v in finite if v > 0), default=1.0)
    need = max(MIN_DECIMALS, SIGNIFICANT - 1 - math.floor(math.log10(top)))
    d = min(need, MAX_DECIMALS)
    while d < MAX_DECIMALS and any(a != b and f"{a:.{d}f}" == f"{b:.{d}f}" for a, b in zip(values, values[1:])):
        d += 1
    return d


def score_texts(results: Sequence[SearchResult]) -> list[str]:
    """The score text of each result, in one number format for the whole list (digits as needed)."""
    values = [ordering_score(r)[0] for r in results]
    d = _decimals(values)
    return [f"{v:.{d}f}" for v in values]
