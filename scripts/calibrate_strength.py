"""Calibrate retrieve/strength.py's thresholds on a bench index: train queries + generated nonsense (seed 13).

    .venv/bin/python scripts/calibrate_strength.py DB DATASET [--split train] [--nonsense 300]

DB is a `desktop-memory bench` index of DATASET (e.g. the cache file it printed). For every judged query and every
nonsense query it runs the real searcher (hybrid, then keyword) at top_k 10 and prints, per threshold, the share
of relevant top-3 results that would be called strong and the share of nonsense queries with no strong result.
`bench` reports the chosen thresholds on other (seed 0) nonsense queries and on the test split.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from desktop_memory.config import Settings
from desktop_memory.embed import make_embedder
from desktop_memory.retrieve.searcher import Searcher
from desktop_memory.retrieve.strength import LaneScale, normalised_bm25
from desktop_memory.store import Store
from desktop_memory_bench.dataset import doc_id_from_path, load_beir
from desktop_memory_bench.nonsense import corpus_vocabulary, nonsense_queries

Rows = list[list[float]]  # per query: a feature per result (cosine, or BM25 share)


def features(store: Store, searcher: Searcher, embedder, queries: dict[str, str], backend: str,
             qrels: dict[str, dict[str, int]] | None) -> tuple[list[float], Rows]:
    """(feature of each relevant top-3 result, features of every result per query)."""
    relevant: list[float] = []
    per_query: Rows = []
    for qid, text in queries.items():
        out = searcher.search(store, embedder if backend != "keyword" else None, text, backend=backend, top_k=10)
        scale = LaneScale(store, text)
        feats = []
        for r in out.results:
            if backend == "keyword":
                f = normalised_bm25(r.lanes.get("fts"), scale)
            else:
                f = r.lanes["dense"].score if "dense" in r.lanes else -1.0
            feats.append(f)
            if qrels is not None and r.rank <= 3 and qrels.get(qid, {}).get(doc_id_from_path(r.source), 0) > 0:
                relevant.append(f)
        per_query.append(feats)
    return relevant, per_query


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("db", type=Path)
    ap.add_argument("dataset", type=Path)
    ap.add_argument("--split", default="train")
    ap.add_argument("--nonsense", type=int, default=300)
    args = ap.parse_args()
    ds = load_beir(args.dataset, args.split)
    store = Store(args.db)
    embedder = make_embedder(Settings().embedder)
    searcher = Searcher(Settings().search)
    vocab = corpus_vocabulary([f"{t} {x}" for t, x in ds.corpus.values()])
    junk = {str(i): q for i, q in enumerate(nonsense_queries(vocab, args.nonsense, seed=13))}
    grids = {"hybrid": [0.38, 0.40, 0.42, 0.44, 0.45, 0.46, 0.48, 0.50, 0.52],
             "keyword": [0.15, 0.20, 0.25, 0.30, 0.35, 0.40]}
    print(f"{ds.name} {args.split}: {len(ds.queries)} judged queries, {len(junk)} nonsense queries (seed 13)")
    for backend, grid in grids.items():
        rel, _ = features(store, searcher, embedder, ds.queries, backend, ds.qrels)
        _, non = features(store, searcher, embedder, junk, backend, None)
        name = "cosine" if backend == "hybrid" else "BM25 share of ceiling"
        print(f"\n{backend}: threshold on {name} · relevant top-3 results: {len(rel)}")
        print("threshold  relevant top-3 strong  nonsense weak")
        for t in grid:
            strong = sum(f >= t for f in rel) / max(1, len(rel))
            weak = sum(all(f < t for f in q) for q in non) / max(1, len(non))
            print(f"{t:9.2f}  {100 * strong:20.1f} %  {100 * weak:11.1f} %")
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
