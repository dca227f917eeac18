"""Calibrate retrieve/strength.py's thresholds on a bench index: train queries + generated nonsense (seeds 13-17).

    .venv/bin/python scripts/calibrate_strength.py DB DATASET [--split train] [--nonsense 300] [--seeds 13,14,15,16,17]

DB is a `desktop-memory bench` index of DATASET (e.g. the cache file it printed). For every judged query and every
nonsense query it runs the real searcher (hybrid, then keyword) at top_k 10 and prints, per rule, the share
of relevant top-3 results that would be called strong and the share of nonsense queries with no strong result.
`bench` reports the chosen thresholds on other (seed 0) nonsense queries and on the test split.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from desktop_memory.config import Settings
from desktop_memory.embed import make_embedder
from desktop_memory.retrieve.searcher import Searcher
from desktop_memory.retrieve.strength import LaneScale, normalised_bm25
from desktop_memory.store import Store
from desktop_memory_bench.dataset import doc_id_from_path, load_beir
from desktop_memory_bench.nonsense import corpus_vocabulary, nonsense_queries

Rows = list[list[tuple[float, float]]]  # per query, per result: (cosine or -1, BM25 share of the ceiling)


def features(store: Store, searcher: Searcher, embedder, queries: dict[str, str], backend: str,
             qrels: dict[str, dict[str, int]] | None) -> tuple[list[tuple[float, float]], Rows]:
    """(features of each relevant top-3 result, features of every result per query)."""
    relevant: list[tuple[float, float]] = []
    per_query: Rows = []
    for qid, text in queries.items():
        out = searcher.search(store, embedder if backend != "keyword" else None, text, backend=backend, top_k=10)
        scale = LaneScale(store, text)
        feats = []
        for r in out.results:
            f = (r.lanes["dense"].score if "dense" in r.lanes else -1.0, normalised_bm25(r.lanes.get("fts"), scale))
            feats.append(f)
            if qrels is not None and r.rank <= 3 and qrels.get(qid, {}).get(doc_id_from_path(r.source), 0) > 0:
                relevant.append(f)
        per_query.append(feats)
    return relevant, per_query


Rule = Callable[[tuple[float, float]], bool]


def _cos(c: float) -> Rule:
    return lambda f: f[0] >= c


def _share(t: float) -> Rule:
    return lambda f: f[1] >= t


def _agree(a: float, s: float, c: float) -> Rule:
    """cosine >= c alone, or cosine >= a with the keyword lane's share >= s."""
    return lambda f: f[0] >= c or (f[0] >= a and f[1] >= s)


def _blend(floor: float, weight: float, target: float) -> Rule:
    """strength.py's hybrid rule: cosine >= floor and cosine + weight x share >= target."""
    return lambda f: f[0] >= floor and f[0] + weight * f[1] >= target


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("db", type=Path)
    ap.add_argument("dataset", type=Path)
    ap.add_argument("--split", default="train")
    ap.add_argument("--nonsense", type=int, default=300, help="nonsense queries per seed")
    ap.add_argument("--seeds", default="13,14,15,16,17", help="nonsense generator seeds (bench uses 0)")
    args = ap.parse_args()
    ds = load_beir(args.dataset, args.split)
    store = Store(args.db)
    embedder = make_embedder(Settings().embedder)
    searcher = Searcher(Settings().search)
    vocab = corpus_vocabulary([f"{t} {x}" for t, x in ds.corpus.values()])
    seeds = [int(x) for x in args.seeds.split(",") if x.strip()]
    junk = {f"{sd}-{i}": q for sd in seeds for i, q in enumerate(nonsense_queries(vocab, args.nonsense, seed=sd))}
    rules: dict[str, list[tuple[str, Rule]]] = {
        "hybrid": [(f"cosine >= {c:.2f}", _cos(c)) for c in (0.44, 0.46, 0.48, 0.50)] + [
            (f"cosine >= {a:.2f} and share >= {s:.2f}, or cosine >= {c:.2f}", _agree(a, s, c))
            for a in (0.42, 0.44, 0.46) for s in (0.10, 0.15, 0.20) for c in (0.52, 0.55, 0.58)] + [
            (f"cosine >= {a:.2f} and cosine + {w:.1f} x share >= {t:.2f}", _blend(a, w, t))
            for a in (0.40, 0.44) for w in (0.3, 0.4, 0.5) for t in (0.54, 0.56, 0.58, 0.60)],
        "keyword": [(f"BM25 share >= {t:.2f}", _share(t)) for t in (0.15, 0.20, 0.25, 0.30, 0.35, 0.40)],
    }
    print(f"{ds.name} {args.split}: {len(ds.queries)} judged queries, {len(junk)} nonsense (seeds {args.seeds})")
    for backend, grid in rules.items():
        rel, _ = features(store, searcher, embedder, ds.queries, backend, ds.qrels)
        _, non = features(store, searcher, embedder, junk, backend, None)
        print(f"\n{backend}: relevant top-3 results: {len(rel)}")
        print(f"{'rule':<52}  relevant top-3 strong  nonsense weak")
        for name, rule in grid:
            strong = sum(rule(f) for f in rel) / max(1, len(rel))
            weak = sum(not any(rule(f) for f in q) for q in non) / max(1, len(non))
            print(f"{name:<52}  {100 * strong:20.1f} %  {100 * weak:11.1f} %")
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
