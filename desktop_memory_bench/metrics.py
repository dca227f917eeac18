"""IR metrics through ir-measures (pytrec_eval underneath): nDCG@10, Recall@100, MRR@10, and friends.

Queries without any result still count (as 0): pytrec_eval alone would silently score only the queries that
appear in the run, which flatters a backend that returns nothing for hard queries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import ir_measures
from ir_measures import RR, Measure, R, nDCG

# name in our output -> ir-measures measure. RR@10 is MRR@10 once averaged over queries.
MEASURES: dict[str, Measure] = {"ndcg@10": nDCG @ 10, "recall@100": R @ 100, "mrr@10": RR @ 10}


def run_from_rankings(rankings: Mapping[str, Sequence[str]]) -> dict[str, dict[str, float]]:
    """Ranked doc-id lists -> an ir-measures run. Scores are strictly decreasing, so no tie can reorder them."""
    run: dict[str, dict[str, float]] = {}
    for qid, docs in rankings.items():
        scores: dict[str, float] = {}
        for rank, did in enumerate(docs):
            if did not in scores:  # first occurrence wins (a document's best chunk)
                scores[did] = float(len(docs) - rank)
        run[qid] = scores
    return run


def evaluate(
    qrels: Mapping[str, Mapping[str, int]],
    rankings: Mapping[str, Sequence[str]],
    measures: Mapping[str, Measure] | None = None,
) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """(mean per measure over every judged query, {query: {measure: value}})."""
    measures = dict(measures or MEASURES)
    by_measure = {m: name for name, m in measures.items()}
    qrels_d = {q: {d: int(g) for d, g in rel.items()} for q, rel in qrels.items() if rel}
    run = {q: docs for q, docs in run_from_rankings(rankings).items() if q in qrels_d and docs}
    per_query: dict[str, dict[str, float]] = {q: {name: 0.0 for name in measures} for q in qrels_d}
    if run:
        for metric in ir_measures.iter_calc(list(measures.values()), qrels_d, run):
            per_query[metric.query_id][by_measure[metric.measure]] = float(metric.value)
    n = max(1, len(per_query))
    means = {name: sum(v[name] for v in per_query.values()) / n for name in measures}
    return means, per_query
