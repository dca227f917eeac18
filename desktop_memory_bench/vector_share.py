"""Search while the embedding has reached only part of the library: quality and match strength with vectors for a
random share of the passages.

    python -m desktop_memory_bench.vector_share ../shared/eval/scifact --split train --shares 0.1,0.5,1 \
        --db /tmp/lanes/scifact.db --work /tmp/lanes/shares

The full index is built (or reused) exactly as ``desktop-memory bench`` builds it (runner.open_or_build, same
cache key), so every passage's vector is computed once. For a share below 1 the index is copied and its vectors
are reset; then the vectors of a seeded random sample of the passages are written back from the full index (the
same vectors, no re-embedding), leaving the rest "not embedded yet" as a library looks mid-embedding. Query
vectors are cached across shares. Every query runs through ``MemoryService.search_outcome`` (hybrid):

- a quality pass deep enough to rank ``depth`` documents (as runner.py): nDCG@10, Recall@100;
- the app's first screen (top_k 10): nDCG@10 of the by-file list, the share of shown passages called strong, the
  share of queries with no strong result (their default context is empty), the share of relevant top-3 results
  called strong;
- the keyword lane's #1 passage when it has no vector: where it is shown and whether it is strong.

``--rankings FILE`` writes each query's results (chunk id, fused score, strength) so two runs (the code before
and after a change) can be compared with ``--compare``: same chunks with the same fused scores and strengths, in
fused order, per query. Strong-first ordering moves results without changing their scores, and can take a strong
result from deep in the fused list into a list of fixed length (pushing a weak one out), so a query counts as
"reordered" when every result both runs hold has the same fused score and strength and the rest is what that
ordering explains, "changed" otherwise (the exit status is 1 when any query changed).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from desktop_memory.embed import make_embedder
from desktop_memory.embed.base import Embedder
from desktop_memory.store import Store

from .dataset import doc_id_from_path, load_beir
from .metrics import evaluate
from .runner import BenchOptions, bench_settings, open_or_build
from .table import render_table

APP_TOP_K = 10


class CachedQueries:
    """An embedder whose query vectors are computed once per text (the shares reuse them); everything else is
    the wrapped embedder's."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self._cache: dict[str, np.ndarray] = {}

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dim(self) -> int:
        return self._inner.dim

    def load(self) -> None:
        self._inner.load()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        vec = self._cache.get(text)
        if vec is None:
            vec = self._cache[text] = self._inner.embed_query(text)
        return vec

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return self._inner.count_tokens(texts)


def partial_copy(full: Path, share: float, seed: int, work: Path, sample: str = "random") -> tuple[Path, set[int]]:
    """(database, ids with a vector): ``full`` itself for a share of 1, else a copy holding the vectors of
    ``share`` of its passages (copied from ``full``, not re-embedded): a seeded random sample, or with
    ``sample="first"`` the first passages in reading order (chunk id), which is what a library holds while its
    first embedding runs; then ``full`` may itself be a snapshot of a library still embedding."""
    src = Store(full, readonly=True)
    try:
        embedded = sorted(int(cid) for (cid,) in src.conn.execute("select id from chunk_vectors"))
        passages = sorted(int(cid) for (cid,) in src.conn.execute("select id from chunks where dup_of is null"))
        if share >= 1:
            if len(embedded) != len(passages):
                raise RuntimeError(f"{full} holds {len(embedded)} vectors for {len(passages)} passages")
            return full, set(embedded)
        wanted = round(len(passages) * share)
        if sample == "first":
            keep = passages[:wanted]
            if not set(keep) <= set(embedded):
                raise RuntimeError(f"{full} lacks vectors for some of its first {wanted} passages")
        else:
            if len(embedded) != len(passages):
                raise RuntimeError(f"a random share needs a fully embedded {full}")
            keep = sorted(random.Random(seed).sample(embedded, wanted))
        work.mkdir(parents=True, exist_ok=True)
        db = work / f"{full.stem}-{sample}{round(share * 100):03d}-seed{seed}.db"
        for suffix in ("", "-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
        src.conn.execute("vacuum into ?", (str(db),))
        model_id, dim = src.model_info()
        blocks = list(src.iter_vectors(ids=keep))
    finally:
        src.conn.close()
    dst = Store(db)
    try:
        dst.reset_vectors(model_id, dim)
        for ids, vectors in blocks:
            dst.store_vectors([int(i) for i in ids], vectors)
        stored = {int(cid) for (cid,) in dst.conn.execute("select id from chunk_vectors")}
    finally:
        dst.conn.close()
    if stored != set(keep):
        raise RuntimeError(f"{db}: {len(stored)} vectors written, {len(keep)} meant")
    return db, stored


def run_share(svc: Any, ds: Any, vectored: set[int], chunk_depth: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """(figures, per-query rankings) for one database."""
    full: dict[str, list[str]] = {}
    by_file: dict[str, list[str]] = {}
    saved: dict[str, Any] = {}
    shown = strong_shown = weak_queries = rel3 = rel3_strong = 0
    kw1_missing = kw1_top3 = kw1_first = kw1_strong = 0
    kw1_positions: list[int] = []
    for qid, text in ds.queries.items():
        out = svc.search_outcome(text, backend="hybrid", top_k=chunk_depth)
        docs = list(dict.fromkeys(doc_id_from_path(r.source) for r in out.results))
        full[qid] = docs[:100]
        saved[qid] = {"deep": [[r.chunk_id, r.score, r.strength] for r in out.results]}
        for r in out.results:
            kw = r.lanes.get("fts")
            if kw is not None and kw.rank == 1:
                if r.chunk_id not in vectored:
                    kw1_missing += 1
                    kw1_positions.append(r.rank)
                    kw1_top3 += r.rank <= 3
                    kw1_first += r.rank == 1
                    kw1_strong += r.strength == "strong"
                break
        app = svc.search_outcome(text, backend="hybrid", top_k=APP_TOP_K)
        saved[qid]["app"] = [[r.chunk_id, r.score, r.strength] for r in app.results]
        by_file[qid] = list(dict.fromkeys(doc_id_from_path(r.source) for r in app.files))
        shown += len(app.results)
        strong_shown += sum(r.strength == "strong" for r in app.results)
        weak_queries += not any(r.strength == "strong" for r in app.results)
        for r in app.results[:3]:
            if ds.qrels.get(qid, {}).get(doc_id_from_path(r.source), 0) > 0:
                rel3 += 1
                rel3_strong += r.strength == "strong"
    means, _ = evaluate(ds.qrels, full)
    n = max(1, len(ds.queries))
    figures = {
        "ndcg@10": means["ndcg@10"],
        "recall@100": means["recall@100"],
        "ndcg@10_by_file": evaluate(ds.qrels, by_file)[0]["ndcg@10"],
        "strong_shown_share": strong_shown / shown if shown else float("nan"),
        "no_strong_share": weak_queries / n,
        "relevant_top3_strong_share": rel3_strong / rel3 if rel3 else float("nan"),
        "kw1_without_vector": kw1_missing,
        "kw1_without_vector_first": kw1_first,
        "kw1_without_vector_top3": kw1_top3,
        "kw1_without_vector_strong": kw1_strong,
        "kw1_without_vector_median_rank": float(np.median(kw1_positions)) if kw1_positions else float("nan"),
    }
    return figures, saved


def _verdict(before: list[list[Any]], after: list[list[Any]]) -> str:
    """"same": the same results with the same fused scores and strengths (in fused order); "reordered": every
    result both lists hold has the same fused score and strength, and the ones only one list holds are what
    strong-first ordering explains (``after`` took in strong results from deeper in the fused list, which
    pushed weak ones out of ``before``'s length); "changed" otherwise."""
    if len(before) != len(after):  # the same fused candidates give lists of the same length
        return "changed"
    old = {int(c): (float(sc), str(st)) for c, sc, st in before}
    new = {int(c): (float(sc), str(st)) for c, sc, st in after}
    if any(old[c] != new[c] for c in old.keys() & new.keys()):
        return "changed"
    gone, came = old.keys() - new.keys(), new.keys() - old.keys()
    if any(old[c][1] == "strong" for c in gone) or any(new[c][1] != "strong" for c in came):
        return "changed"
    def fused(entries: list[list[Any]]) -> list[int]:
        return [int(c) for c, sc, _ in sorted(entries, key=lambda e: (-float(e[1]), int(e[0])))]
    return "same" if not gone and not came and fused(before) == fused(after) else "reordered"


def compare(a: dict[str, Any], b: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Per share and pass: how many queries' results are the same, only reordered (strong-first), or changed."""
    out: dict[str, dict[str, int]] = {}
    for share, queries in a.items():
        other = b.get(share, {})
        for part in ("deep", "app"):
            counts = {"same": 0, "reordered": 0, "changed": 0}
            for qid, q in queries.items():
                counts[_verdict(q[part], other.get(qid, {}).get(part, []))] += 1
            out[f"{share} {part}"] = counts
    return out


def _pct(x: float) -> str:
    return "-" if math.isnan(x) else f"{100 * x:.1f} %"


def format_table(name: str, split: str, rows: dict[str, dict[str, Any]]) -> str:
    headers = ["vectors", "nDCG@10", "R@100", "by-file nDCG@10", "shown strong", "no strong result",
               "rel top-3 strong", "kw #1 w/o vector", "… shown 1st", "… top 3", "… strong"]
    body = []
    for share, f in rows.items():
        k = f["kw1_without_vector"]
        body.append([share, f"{f['ndcg@10']:.4f}", f"{f['recall@100']:.4f}", f"{f['ndcg@10_by_file']:.4f}",
                     _pct(f["strong_shown_share"]), _pct(f["no_strong_share"]),
                     _pct(f["relevant_top3_strong_share"]), str(k),
                     _pct(f["kw1_without_vector_first"] / k) if k else "-",
                     _pct(f["kw1_without_vector_top3"] / k) if k else "-",
                     _pct(f["kw1_without_vector_strong"] / k) if k else "-"])
    return f"{name} {split}, {rows and next(iter(rows.values()))['queries']} queries, hybrid\n" + \
        render_table(headers, body)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m desktop_memory_bench.vector_share", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", type=Path, nargs="?", help="BEIR folder (not needed with --compare)")
    ap.add_argument("--split", default="train", choices=("test", "train"))
    ap.add_argument("--shares", default="0.1,0.5,1", help="comma list of vector shares in (0, 1]")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sample", default="random", choices=("random", "first"),
                    help="which passages keep their vectors: a seeded random sample, or the first in reading order")
    ap.add_argument("--snapshot", action="store_true",
                    help="use --db as it is (e.g. a copy taken while its first embedding runs; with --sample first)")
    ap.add_argument("--db", type=Path, help="the full index (built like `desktop-memory bench --db` if missing)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/dm-vector-share"), help="folder for the partial copies")
    ap.add_argument("--embedder", default="local", choices=("local", "hash"))
    ap.add_argument("--limit-queries", type=int)
    ap.add_argument("--out", type=Path, help="write the figures as JSON")
    ap.add_argument("--rankings", type=Path, help="write per-query results (for --compare)")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"),
                    help="only compare two --rankings files and print the queries that differ")
    args = ap.parse_args(argv)
    if args.compare:
        a, b = (json.loads(p.read_text()) for p in args.compare)
        diff = compare(a, b)
        print(render_table(["share / pass", "same", "reordered (strong first)", "changed"],
                           [[k, str(v["same"]), str(v["reordered"]), str(v["changed"])] for k, v in diff.items()]))
        return 1 if any(v["changed"] for v in diff.values()) else 0
    if args.dataset is None:
        ap.error("a dataset folder is needed (or --compare A B)")
    from desktop_memory.service import MemoryService

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    shares = [float(s) for s in args.shares.split(",") if s.strip()]
    if not shares or any(not 0 < s <= 1 for s in shares):
        ap.error("--shares takes values in (0, 1]")
    opts = BenchOptions(dataset=args.dataset, split=args.split, db=args.db, embedder=args.embedder,
                        baseline=False, nonsense=0, log=log)
    ds = load_beir(args.dataset, args.split)
    ds.limit_queries(args.limit_queries)
    settings = bench_settings(opts)
    embedder = CachedQueries(make_embedder(settings.embedder))
    if args.snapshot:
        if args.db is None or not args.db.exists():
            ap.error("--snapshot needs an existing --db")
        full_db = args.db
        probe = Store(full_db, readonly=True)
        try:
            counts = probe.counts()
        finally:
            probe.conn.close()
        docs = sum(counts["by_status"].values())
        index: dict[str, Any] = {"chunks_per_doc": counts["chunks"] / docs if docs else 1.0}
    else:
        full_db, index = open_or_build(ds, opts, settings, embedder, log)
    ratio = index.get("chunks_per_doc") or 1.0
    chunk_depth = min(4096 // max(1, settings.search.overfetch), max(100, math.ceil(100 * ratio * 2)))
    rows: dict[str, dict[str, Any]] = {}
    rankings: dict[str, Any] = {}
    for share in shares:
        db, vectored = partial_copy(full_db, share, args.seed, args.work, args.sample)
        label = f"{round(share * 100)} %"
        log(f"{label}: {len(vectored)} passages with vectors ({db})")
        svc = MemoryService(settings, db_path=db, embedder=embedder)
        try:
            figures, saved = run_share(svc, ds, vectored, chunk_depth)
        finally:
            svc.close()
        figures.update({"queries": len(ds.queries), "vectors": len(vectored), "db": str(db)})
        rows[label] = figures
        rankings[label] = saved
        log(f"  nDCG@10 {figures['ndcg@10']:.4f} · by file {figures['ndcg@10_by_file']:.4f} · shown strong "
            f"{_pct(figures['strong_shown_share'])} · no strong {_pct(figures['no_strong_share'])}")
    print(format_table(ds.name, ds.split, rows))
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2))
    if args.rankings:
        args.rankings.write_text(json.dumps(rankings))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
