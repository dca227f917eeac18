"""Fusing ranked lanes into one list. Two methods, both weighted, ties broken by chunk id:

- ``rrf``: Reciprocal Rank Fusion, score(c) = Σ wᵢ / (k + rankᵢ(c)). Uses ranks only.
- ``zscore``: each lane's raw scores are standardised over its top ``depth`` results (z = (s - mean) / sd,
  floored at the z of its ``depth``-th result, which is also what a chunk missing from that lane gets), and
  score(c) = Σ wᵢ · zᵢ(c). A keyword lane with fewer than ``depth`` hits is padded with zeros, the BM25 score of
  every chunk it did not match, so one lone exact match stands far above the rest, as it should. Unlike RRF it
  keeps *how far* ahead a lane's best hits are: a clear BM25 winner
  outweighs a flat dense tail and vice versa. The statistics come from a fixed depth, so the order of the top
  results does not depend on how many results were asked for.

RRF (k = 60, equal weights) is the default, as the product specifies; z-score fusion is the measured alternative.
What each gives, and what was tried on train, is in docs/BENCHMARKS.md ("Fusion", "Chunk size").

**A lane that could not judge a chunk** (``unjudged``: the semantic lane and a passage the embedding has not reached
yet) must not count as a lane that judged it badly: that chunk's score is the weighted mean of the lanes that could
judge it, times the total weight (score × Σ all weights / Σ its lanes' weights). For RRF this reads its missing
semantic rank as equal to its keyword rank: a keyword #1 without a vector scores what a passage ranked #1 by both
lanes scores, instead of sinking below a passage the keyword lane ranked 117th but the semantic lane liked. With
every passage embedded nothing is unjudged and the scores are exactly the plain ones (docs/RETRIEVAL.md, "While
vectors are missing").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Set

from ..models import LaneHit

FUSIONS = ("zscore", "rrf")
ZSCORE_DEPTH = 200  # results per lane that set its mean / sd / floor (lanes fetch at least this many)
ZERO_FLOOR_LANES = frozenset({"fts", "bm25"})  # BM25 lanes: a chunk not returned scores 0

Lanes = dict[str, list[tuple[int, float]]]
Fused = list[tuple[int, float, dict[str, LaneHit]]]
Unjudged = Mapping[str, Set[int]]  # lane -> chunks that lane could not judge (e.g. no vector yet)


def _hits(lanes: Lanes) -> dict[int, dict[str, LaneHit]]:
    hits: dict[int, dict[str, LaneHit]] = {}
    for lane, ranked in lanes.items():
        for rank, (cid, raw) in enumerate(ranked, start=1):
            hits.setdefault(cid, {})[lane] = LaneHit(rank=rank, score=raw)
    return hits


def _rescale_unjudged(fused: dict[int, float], lanes: Lanes, weights: dict[str, float],
                      unjudged: Unjudged | None) -> None:
    """Score × (Σ weights of the lanes that ran) / (Σ weights of the lanes that could judge the chunk), in place,
    for every chunk some lane that ran could not judge (see the module docstring)."""
    if not unjudged:
        return
    ran = [lane for lane in lanes if unjudged.get(lane) is not None]
    if not ran:
        return
    total = sum(weights.get(lane, 1.0) for lane in lanes)
    blind: dict[int, float] = {}  # chunk -> weight of the lanes that could not judge it
    for lane in ran:
        judged = {cid for cid, _ in lanes[lane]}
        for cid in unjudged[lane]:
            if cid not in judged:  # a lane that ranked a chunk has judged it, whatever the caller thought
                blind[cid] = blind.get(cid, 0.0) + weights.get(lane, 1.0)
    for cid, missing in blind.items():
        judging = total - missing
        if cid in fused and judging > 1e-12:
            fused[cid] *= total / judging


def rrf_fuse(lanes: Lanes, weights: dict[str, float], k: int = 60, unjudged: Unjudged | None = None) -> Fused:
    """Fuse ranked lanes of (chunk_id, raw score) into [(chunk_id, fused score, {lane: LaneHit})], best first.
    ``unjudged``: per lane, the chunks it could not judge (their score is rescaled, see the module docstring)."""
    fused: dict[int, float] = {}
    for lane, ranked in lanes.items():
        w = weights.get(lane, 1.0)
        for rank, (cid, _raw) in enumerate(ranked, start=1):
            fused[cid] = fused.get(cid, 0.0) + w / (k + rank)
    _rescale_unjudged(fused, lanes, weights, unjudged)
    hits = _hits(lanes)
    order = sorted(fused, key=lambda cid: (-fused[cid], cid))
    return [(cid, fused[cid], hits[cid]) for cid in order]


def zscore_fuse(lanes: Lanes, weights: dict[str, float], depth: int = ZSCORE_DEPTH,
                unjudged: Unjudged | None = None) -> Fused:
    """Weighted sum of per-lane standardised scores (see the module docstring)."""
    fused: dict[int, float] = {}
    depth = max(1, depth)
    for lane, ranked in lanes.items():
        if not ranked:
            continue
        w = weights.get(lane, 1.0)
        top = [raw for _, raw in ranked[:depth]]
        if lane in ZERO_FLOOR_LANES and len(top) < depth:
            top += [0.0] * (depth - len(top))
        mean = sum(top) / len(top)
        sd = math.sqrt(sum((x - mean) ** 2 for x in top) / len(top))
        if sd <= 1e-12 or not math.isfinite(sd):
            sd = 1.0  # one result, or all equal: every hit is "average" (z = 0)
        floor = (top[-1] - mean) / sd
        for cid, raw in ranked:
            fused[cid] = fused.get(cid, 0.0) + w * (max((raw - mean) / sd, floor) - floor)
    # Scores are shifted so a chunk absent from a lane gets 0 there (its floor): fused >= 0, and the order is the
    # same as summing raw z-scores with missing = floor.
    _rescale_unjudged(fused, lanes, weights, unjudged)
    hits = _hits(lanes)
    order = sorted(fused, key=lambda cid: (-fused[cid], cid))
    return [(cid, fused[cid], hits[cid]) for cid in order]


def fuse(lanes: Lanes, weights: dict[str, float], *, method: str = "rrf", rrf_k: int = 60,
         depth: int = ZSCORE_DEPTH, unjudged: Unjudged | None = None) -> Fused:
    """Fuse with ``method`` ("rrf", the default, or "zscore"); an unknown method falls back to RRF.
    ``unjudged``: per lane, the chunks that lane could not judge (no vector yet for the semantic lane)."""
    if method == "zscore":
        return zscore_fuse(lanes, weights, depth=depth, unjudged=unjudged)
    return rrf_fuse(lanes, weights, k=rrf_k, unjudged=unjudged)
