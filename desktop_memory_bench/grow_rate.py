"""Insertion rate as a library grows: ``scale.grow`` (the real write path) in steps, one line per step.

Each line gives passages/s by wall clock and by this process's CPU (text and vectors apart) and the bytes the
process wrote: on a shared machine the wall rate is mostly waiting for a core, the CPU rate and the bytes are not.
``--write-batch 10`` writes one 10-chunk document per transaction, the write path as it was before batching.

    python -m desktop_memory_bench.grow_rate --base corpus.jsonl --db grown.db --to 1000000 [--write-batch 1000]

``--base`` is a BEIR ``corpus.jsonl`` (~80-word chunks of its texts, random unit vectors: the write path does not
look at them) or an index built by ``bench`` (its chunk texts and real vectors). ``--db`` is grown in place.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from desktop_memory.ingest.pipeline import WRITE_BATCH_CHUNKS
from desktop_memory.store import Store

from .scale import Synthesiser, grow

MODEL = ("all-MiniLM-L6-v2-int8", 384)  # the app's default model id: the app probe can open the grown library


def _written_mb() -> float:
    try:
        with open("/proc/self/io", encoding="ascii") as fh:
            return next(int(line.split()[1]) for line in fh if line.startswith("write_bytes")) / 2**20
    except (OSError, StopIteration, ValueError):
        return float("nan")


def _base(path: Path) -> tuple[list[str], np.ndarray, str, int]:
    if path.suffix == ".jsonl":
        texts = []
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                doc = json.loads(line)
                words = f"{doc.get('title', '')} {doc.get('text', '')}".split()
                texts += [" ".join(words[i : i + 80]) for i in range(0, len(words), 70)]
        vecs = np.random.default_rng(1).normal(size=(len(texts), MODEL[1])).astype(np.float32)
        return texts, vecs / np.linalg.norm(vecs, axis=1, keepdims=True), *MODEL
    base = Store(path, readonly=True)
    try:
        rows = base.conn.execute("select c.text, v.embedding from chunks c join chunk_vectors v on v.id = c.id "
                                 "order by c.id").fetchall()
        model_id, dim = base.model_info()
    finally:
        base.close()
    vecs = np.stack([np.frombuffer(bytes(r[1]), dtype="<f4") for r in rows])  # type: ignore[arg-type]
    return [str(r[0]) for r in rows], vecs, str(model_id), int(dim or vecs.shape[1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m desktop_memory_bench.grow_rate", description=__doc__.split("\n")[0])
    p.add_argument("--base", type=Path, required=True)
    p.add_argument("--db", type=Path, required=True)
    p.add_argument("--to", type=int, required=True, help="passages in the library at the end")
    p.add_argument("--step", type=int, default=100_000)
    p.add_argument("--write-batch", type=int, default=WRITE_BATCH_CHUNKS, help="chunks per transaction")
    args = p.parse_args(argv)
    texts, vecs, model_id, dim = _base(args.base)
    synth = Synthesiser(texts, vecs)
    store = Store(args.db)
    try:
        have = store.pending_count() + store.counts()["vectors"]
        synth.counter = have
        while have < args.to:
            target = min(args.to, (have // args.step + 1) * args.step)
            t0, w0 = time.perf_counter(), _written_mb()
            r = grow(store, synth, target, model_id, dim, lambda _msg: None, write_batch=args.write_batch)
            n, cpu = r["added"], r["text_cpu_s"] + r["vector_cpu_s"]
            print(f"{target:>9,} passages: {n / (r['text_s'] + r['vector_s']):6.0f}/s wall (text "
                  f"{n / r['text_s']:6.0f}, vectors {n / r['vector_s']:6.0f}) · {n / cpu:6.0f}/s CPU (text "
                  f"{n / r['text_cpu_s']:6.0f}, vectors {n / r['vector_cpu_s']:6.0f}) · written "
                  f"{_written_mb() - w0:5.0f} MB · {time.perf_counter() - t0:5.1f} s · load {os.getloadavg()[0]:.1f}",
                  flush=True)
            have = target
    finally:
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
