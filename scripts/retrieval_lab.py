"""Offline retrieval lab: the keyword lane's BM25 in numpy (same tokens, idf and k1/b as FTS5's bm25()) and exact
cosine over the stored vectors, so query-side ideas can be scored in seconds on a bench index. Document-level
nDCG@10 as `bench` computes it (a document ranks at its best chunk).

    .venv/bin/python scripts/retrieval_lab.py DB DATASET [--split train] [--folds] [--experiment prf]

DB is a `desktop-memory bench` index of DATASET. ``--folds`` reports odd / even query ids separately (Cranfield
has no train split). Experiments (docs/BENCHMARKS.md, "Retrieval, second pass"):

- ``base``: the keyword lane, the semantic lane and RRF (k = 60), as a check against `bench`;
- ``prf``: RM3 feedback from the keyword lane's own top chunks (the keyword backend with feedback);
- ``fused-prf``: the same feedback taken from the hybrid's first fused top chunks, keyword lane and hybrid re-fused.

Derived arrays are cached next to DB (``DB.lab.pkl``, ``DB.SPLIT.q.pkl``); delete them after re-indexing.
"""

from __future__ import annotations

import argparse
import itertools
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from desktop_memory.config import Settings
from desktop_memory.retrieve.fusion import rrf_fuse
from desktop_memory.retrieve.keyword import index_tokens
from desktop_memory.retrieve.query_text import STOPWORDS, term_counts, weighted_terms
from desktop_memory.store import Store
from desktop_memory_bench.dataset import doc_id_from_path, load_beir
from desktop_memory_bench.metrics import evaluate

K1, B, RRF_K, DEPTH = 1.2, 0.75, 60, 200


class Lab:
    """A bench index held in memory: chunk x term frequencies, chunk vectors, query vectors."""

    def __init__(self, db: Path, dataset: Path, split: str) -> None:
        self.store = Store(db)
        self.ds = load_beir(dataset, split)
        cache = Path(f"{db}.lab.pkl")
        if not cache.exists():
            cache.write_bytes(pickle.dumps(self._read_index()))
        d = pickle.loads(cache.read_bytes())
        self.vocab: dict[str, int] = d["vocab"]
        self.tf: sp.csr_matrix = d["tf"]
        self.cdoc: list[str] = d["cdoc"]
        self.vecs: np.ndarray = d["vecs"]
        dl = np.asarray(self.tf.sum(axis=1)).ravel()
        df = np.asarray((self.tf > 0).sum(axis=0)).ravel()
        n = self.tf.shape[0]
        self.idf = np.maximum(1e-6, np.log((n - df + 0.5) / (df + 0.5)))
        coo = self.tf.tocoo()
        norm = K1 * (1 - B + B * dl / dl.mean())
        self.sat = sp.csr_matrix((coo.data * (K1 + 1) / (coo.data + norm[coo.row]), (coo.row, coo.col)),
                                 shape=coo.shape)
        stems = {t for toks in index_tokens(self.store, sorted(STOPWORDS)) for t in toks}
        self.stop = {self.vocab[t] for t in stems if t in self.vocab}
        qcache = Path(f"{db}.{split}.q.pkl")
        if not qcache.exists():
            from desktop_memory.embed import make_embedder

            emb = make_embedder(Settings().embedder)
            qcache.write_bytes(pickle.dumps({q: emb.embed_query(t) for q, t in self.ds.queries.items()}))
        self.qvec: dict[str, np.ndarray] = pickle.loads(qcache.read_bytes())

    def _read_index(self) -> dict[str, Any]:
        conn = self.store.conn
        conn.execute("create virtual table if not exists temp.lab_v using fts5vocab(main, chunks_fts, 'instance')")
        rows = conn.execute("select term, doc from temp.lab_v").fetchall()
        vocab: dict[str, int] = {}
        cids = sorted({d for _, d in rows})
        pos = {c: i for i, c in enumerate(cids)}
        r = [pos[doc] for _, doc in rows]
        c = [vocab.setdefault(term, len(vocab)) for term, _ in rows]
        tf = sp.csr_matrix((np.ones(len(r), dtype=np.float32), (r, c)), shape=(len(cids), len(vocab)))
        tf.sum_duplicates()
        paths = dict(conn.execute("select c.id, d.path from chunks c join documents d on d.id = c.doc_id"))
        vecs = np.zeros((len(cids), self.store.model_info()[1] or 384), dtype=np.float32)
        for ids, block in self.store.iter_vectors():
            for i, cid in enumerate(ids):
                if int(cid) in pos:
                    vecs[pos[int(cid)]] = block[i]
        return {"vocab": vocab, "tf": tf, "cdoc": [doc_id_from_path(paths[c]) for c in cids], "vecs": vecs}

    def query(self, text: str) -> dict[int, float]:
        """{term column: weight}, the phrases the keyword lane sends."""
        out: dict[int, float] = {}
        for toks in index_tokens(self.store, weighted_terms(term_counts(text))):
            for t in toks:
                if t in self.vocab:
                    out[self.vocab[t]] = out.get(self.vocab[t], 0.0) + 1.0
        return out

    def keyword(self, q: dict[int, float]) -> np.ndarray:
        if not q:
            return np.zeros(0, dtype=np.int64)
        cols = np.fromiter(q, dtype=np.int64)
        scores = np.asarray(self.sat[:, cols] @ (np.fromiter(q.values(), dtype=np.float64) * self.idf[cols])).ravel()
        return top(scores, positive=True)

    def dense(self, qid: str) -> np.ndarray:
        return top(self.vecs @ self.qvec[qid].astype(np.float32), positive=False)

    def docs(self, order: np.ndarray, depth: int = 100) -> list[str]:
        out: list[str] = []
        for i in order:
            if self.cdoc[i] not in out:
                out.append(self.cdoc[i])
                if len(out) >= depth:
                    break
        return out

    def expand(self, q: dict[int, float], feedback: np.ndarray, terms: int, alpha: float) -> dict[int, float]:
        """RM3: alpha x the query + (1 - alpha) x the ``terms`` heaviest non-stopwords of p(w | feedback chunks)."""
        if len(feedback) == 0:
            return q
        rows = self.tf[feedback]
        weights = sp.diags(1.0 / np.maximum(1.0, np.asarray(rows.sum(axis=1)).ravel())) @ rows
        p = np.asarray(weights.sum(axis=0)).ravel() / len(feedback)
        p[list(self.stop)] = 0.0
        best = [j for j in np.argsort(-p, kind="stable")[:terms] if p[j] > 0]
        z, qz = float(p[best].sum()) or 1.0, sum(q.values()) or 1.0
        out = {j: alpha * w / qz for j, w in q.items()}
        for j in best:
            out[int(j)] = out.get(int(j), 0.0) + (1 - alpha) * float(p[j]) / z
        return out


def top(scores: np.ndarray, *, positive: bool, n: int = DEPTH) -> np.ndarray:
    """The ``n`` best indices, score descending, ties by index."""
    idx = np.nonzero(scores > 0)[0] if positive else np.arange(len(scores))
    part = idx[np.argpartition(-scores[idx], n)[:n]] if len(idx) > n else idx
    return part[np.lexsort((part, -scores[part]))]


def rrf(lists: list[np.ndarray]) -> np.ndarray:
    """The app's RRF (k = 60, equal weights) over lanes of chunk positions (positions follow chunk ids, so ties
    break as in the app)."""
    fused = rrf_fuse({str(n): [(int(i), 0.0) for i in ranked] for n, ranked in enumerate(lists)}, {}, k=RRF_K)
    return np.array([i for i, _, _ in fused], dtype=np.int64)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("db", type=Path)
    ap.add_argument("dataset", type=Path)
    ap.add_argument("--split", default="train")
    ap.add_argument("--folds", action="store_true", help="report odd / even query ids separately")
    ap.add_argument("--experiment", choices=("base", "prf", "fused-prf"), default="base")
    args = ap.parse_args()
    lab = Lab(args.db, args.dataset, args.split)
    ids = sorted(lab.ds.queries, key=lambda q: (len(q), q))
    groups = [ids[0::2], ids[1::2]] if args.folds else [ids]
    first = {}
    for qid in ids:
        q = lab.query(lab.ds.queries[qid])
        kw, de = lab.keyword(q), lab.dense(qid)
        first[qid] = (q, kw, de, rrf([kw, de]))

    def score(runs: dict[str, np.ndarray]) -> str:
        ranked = {qid: lab.docs(order) for qid, order in runs.items()}
        return " / ".join(f"{evaluate({q: lab.ds.qrels[q] for q in g if q in lab.ds.qrels}, ranked)[0]['ndcg@10']:.4f}"
                          for g in groups)

    print(f"base: keyword {score({q: v[1] for q, v in first.items()})}  dense "
          f"{score({q: v[2] for q, v in first.items()})}  hybrid {score({q: v[3] for q, v in first.items()})}")
    if args.experiment == "base":
        return
    for fb, terms, alpha in itertools.product((3, 5, 10), (10, 20, 40), (0.5, 0.7, 0.85)):
        src = 1 if args.experiment == "prf" else 3
        kw2 = {qid: lab.keyword(lab.expand(v[0], v[src][:fb], terms, alpha)) for qid, v in first.items()}
        line = f"feedback {fb:2d} chunks, {terms:2d} terms, alpha {alpha:.2f}: keyword {score(kw2)}"
        line += f"  hybrid {score({q: rrf([kw2[q], v[2]]) for q, v in first.items()})}"
        if args.experiment == "fused-prf":
            line += f"  3-lane {score({q: rrf([v[1], kw2[q], v[2]]) for q, v in first.items()})}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
