"""Embedding throughput and peak memory against batch shape, on real SciFact text (the local model).

Each configuration runs in a fresh process (peak RSS is a process high-water mark), embedding the same
768 SciFact abstracts (title + text, first 1,000 characters: one app chunk each) in windows of 256 the way the
indexer does. Prints a table; the figures behind ``EmbedderSettings.batch_tokens`` are in docs/BENCHMARKS.md.

    .venv/bin/python scripts/embed_batch_bench.py [--corpus ../shared/eval/scifact/corpus.jsonl] [--texts 768]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

CONFIGS = [  # (rows per batch, padded-token budget; 0 = none)
    (32, 0), (16, 0), (8, 0), (32, 2048), (32, 1024), (32, 512),
]


def child(corpus: Path, n: int, rows: int, tokens: int) -> None:
    import resource

    from desktop_memory.config import EmbedderSettings
    from desktop_memory.embed.local_onnx import LocalOnnxEmbedder

    texts = []
    with open(corpus, encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            texts.append((d.get("title", "") + " " + d.get("text", ""))[:1000])
            if len(texts) >= n:
                break
    emb = LocalOnnxEmbedder(EmbedderSettings(batch_size=rows, batch_tokens=tokens))
    emb.embed_documents(texts[:2])  # load + warm up
    n_tokens = sum(emb.count_tokens(texts))
    t0 = time.perf_counter()
    for i in range(0, len(texts), 256):
        emb.embed_documents(texts[i : i + 256])
    dt = time.perf_counter() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"chunks_per_s": len(texts) / dt, "tokens_per_s": n_tokens / dt, "peak_rss_mb": peak_mb}))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    root = Path(__file__).resolve().parents[1]
    p.add_argument("--corpus", type=Path, default=root.parent / "shared" / "eval" / "scifact" / "corpus.jsonl")
    p.add_argument("--texts", type=int, default=768)
    p.add_argument("--child", nargs=2, type=int, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args.corpus, args.texts, *args.child)
        return 0
    print(f"{args.texts} SciFact chunks (≤ 1,000 chars, ≤ 256 tokens), windows of 256, local MiniLM int8")
    print("| rows per batch | token budget | chunks/s | tokens/s | peak RSS MB |")
    print("|---:|---:|---:|---:|---:|")
    for rows, tokens in CONFIGS:
        out = subprocess.run([sys.executable, __file__, "--corpus", str(args.corpus), "--texts", str(args.texts),
                              "--child", str(rows), str(tokens)], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"| {rows} | {tokens or '-'} | {r['chunks_per_s']:.1f} | {r['tokens_per_s']:,.0f} "
              f"| {r['peak_rss_mb']:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
