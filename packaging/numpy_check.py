"""Does the app's numpy work run the same without BLAS? (docs/PACKAGING.md, "numpy without OpenBLAS").

    PYTHONPATH=. python packaging/numpy_check.py run OUT.npz [--texts 512] [--rounds 3]   # once per numpy
    python packaging/numpy_check.py compare A.npz B.npz                                      # same results?

``run`` exercises, with whichever numpy the interpreter has, the numpy code the app runs:

* the bundled embedder (``LocalOnnxEmbedder``: tokenise, onnxruntime, mean pooling, L2 norm) on ``--texts``
  deterministic sentences, timed (median texts/s over ``--rounds`` after a warm-up);
* the dense lane's coarse scan on 200,000 random 384-d vectors: ``sign_bits`` (packbits), the column-major word
  matrix, ``hamming`` (XOR + bit counts), ``nearest_by_hamming`` (bincount, cumsum, searchsorted), then ``isin`` and
  ``lexsort`` as the filtered lanes use them; timed the same way;

and saves the vectors and every intermediate result. ``compare`` prints the largest difference between the two
runs' vectors and whether the integer results are identical; it exits 1 if they differ beyond float rounding.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

import numpy as np

WORDS = [
    "memory", "index", "search", "passage", "document", "vector", "keyword", "model", "library", "folder", "note",
    "paper", "context", "query", "result", "chunk", "embedding", "window", "popup", "server", "watch", "file",
    "cell", "protein", "gene", "study", "trial", "dose", "effect", "risk", "patient", "cohort", "signal", "brain",
    "heart", "lung", "liver", "blood", "therapy", "outcome", "analysis", "method", "data", "sample",
]


def _texts(n: int) -> list[str]:
    rng = random.Random(26)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 120))) for _ in range(n)]


def _timed(fn, rounds: int):  # type: ignore[no-untyped-def]
    fn()  # warm-up
    times, out = [], None
    for _ in range(rounds):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def run(out: str, n_texts: int, rounds: int) -> int:
    from desktop_memory.embed.local_onnx import LocalOnnxEmbedder
    from desktop_memory.retrieve.dense import _words, hamming, nearest_by_hamming
    from desktop_memory.store.vectors import sign_bits

    blas = np.show_config(mode="dicts")["Build Dependencies"].get("blas", {})
    print(f"numpy {np.__version__}, BLAS: {blas.get('name') if blas.get('found') else 'none'}")
    emb = LocalOnnxEmbedder()
    emb.load()
    texts = _texts(n_texts)
    t_emb, vecs = _timed(lambda: emb.embed_documents(texts), rounds)
    print(f"embedder: {n_texts} texts in {t_emb:.2f} s = {n_texts / t_emb:.1f} texts/s (median of {rounds})")

    rng = np.random.default_rng(26)
    base = rng.standard_normal((200_000, 384), dtype=np.float32)
    query = rng.standard_normal(384, dtype=np.float32)
    allowed = np.sort(rng.choice(200_000, 50_000, replace=False))

    def scan():  # type: ignore[no-untyped-def]
        words = _words(sign_bits(base))
        qwords = _words(sign_bits(query))[:, 0]
        dist = hamming(words, qwords)
        near = nearest_by_hamming(dist, 5000)
        mask = np.isin(near, allowed)
        scores = (dist[near] % 17).astype(np.float32)
        order = near[np.lexsort((near, -scores))]
        return dist, near, mask, order

    t_scan, (dist, near, mask, order) = _timed(scan, rounds)
    print(f"dense lane's coarse scan on 200,000 vectors: {t_scan * 1000:.1f} ms (median of {rounds})")
    np.savez(out, vecs=vecs, dist=dist, near=near, mask=mask, order=order,
             timing=np.array([n_texts / t_emb, t_scan * 1000]))
    return 0


def compare(a_path: str, b_path: str) -> int:
    a, b = np.load(a_path), np.load(b_path)
    diff = float(np.abs(a["vecs"] - b["vecs"]).max())
    same = {k: bool(np.array_equal(a[k], b[k])) for k in ("dist", "near", "mask", "order")}
    print(f"vectors: largest difference {diff:.2e}; integer results identical: {same}")
    for name, path, d in (("A", a_path, a), ("B", b_path, b)):
        print(f"  {name} {path}: embedder {d['timing'][0]:.1f} texts/s, coarse scan {d['timing'][1]:.1f} ms")
    return 0 if diff < 1e-5 and all(same.values()) else 1


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("out")
    r.add_argument("--texts", type=int, default=512)
    r.add_argument("--rounds", type=int, default=3)
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    args = p.parse_args(argv)
    return run(args.out, args.texts, args.rounds) if args.cmd == "run" else compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
