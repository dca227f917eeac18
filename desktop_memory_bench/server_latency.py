"""What a model server adds per query, split into the model's own work and the protocol around it.

    python -m desktop_memory_bench.server_latency DATASET --db INDEX --url http://127.0.0.1:PORT --model NAME
        [--queries 100] [--depth 30]

For each query (the dataset's own, in order): the query embedding locally (the bundled MiniLM, in process) and
through the server's ``/v1/embeddings``; then the top ``depth`` passages of the app's hybrid search reranked through
the server's ``/v1/rerank`` and, for comparison, the same work done in process (embedding the query and the passages
with MiniLM and taking cosines: what the loopback test server does behind its API). When the server is the loopback
one (``python -m tests.support.openai_server``), the difference between the two is the HTTP + JSON cost of the
protocol; against a real server, the HTTP figures are what a person's model costs. Prints p50/p95/mean tables.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from desktop_memory.config import EmbedderSettings, Settings
from desktop_memory.embed import LocalOnnxEmbedder
from desktop_memory.embed.openai_compat import OpenAICompatEmbedder
from desktop_memory.errors import EmbedderError
from desktop_memory.retrieve.rerank import HttpReranker

from .dataset import load_beir
from .latency import percentile
from .table import render_table


def measure(dataset: Path, db: Path, url: str, model: str, n_queries: int, depth: int) -> dict[str, list[float]]:
    from desktop_memory.service import MemoryService

    ds = load_beir(dataset, "test")
    queries = list(ds.queries.values())[:n_queries]
    local = LocalOnnxEmbedder()
    local.load()
    remote = OpenAICompatEmbedder(EmbedderSettings(kind="openai", openai_url=url, openai_model=model))
    reranker = HttpReranker(url, model, timeout_s=30)
    settings = Settings(embedder=EmbedderSettings(kind="openai", openai_url=url, openai_model=model))
    svc = MemoryService(settings, db_path=db, embedder=remote)
    times: dict[str, list[float]] = {k: [] for k in ("embed local", "embed HTTP", "rerank local", "rerank HTTP")}
    failures = 0
    try:
        remote.embed_query(queries[0])  # warm the connection and the server's model
        reranker.rerank(queries[0], ["warm", "up"])
        for q in queries:
            for name, embedder in (("embed local", local), ("embed HTTP", remote)):
                t0 = time.perf_counter()
                embedder.embed_query(q)
                times[name].append((time.perf_counter() - t0) * 1000)
            texts = [r.text for r in svc.search_outcome(q, backend="hybrid", top_k=depth).results][:depth]
            t0 = time.perf_counter()
            _ = local.embed_documents(texts) @ local.embed_query(q)
            times["rerank local"].append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            try:
                reranker.rerank(q, texts)
            except EmbedderError:  # counted, never hidden: the table's n says how many answered
                failures += 1
                times["rerank local"].pop()
                continue
            times["rerank HTTP"].append((time.perf_counter() - t0) * 1000)
    finally:
        svc.close()
        remote.close()
        reranker.close()
    if failures:
        print(f"{failures} rerank call(s) failed (timeout 30 s) and are left out", flush=True)
    return times


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dataset", type=Path)
    p.add_argument("--db", type=Path, required=True, help="an index built with --embedder openai by `bench`")
    p.add_argument("--url", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--depth", type=int, default=30)
    args = p.parse_args()
    times = measure(args.dataset, args.db, args.url, args.model, args.queries, args.depth)
    rows = [[name, f"{percentile(v, 50):.2f}", f"{percentile(v, 95):.2f}", f"{float(np.mean(v)):.2f}", str(len(v))]
            for name, v in times.items()]
    for what in ("embed", "rerank"):
        extra = [h - loc for h, loc in zip(times[f"{what} HTTP"], times[f"{what} local"])]
        rows.append([f"{what}: protocol (HTTP - local)", f"{percentile(extra, 50):.2f}",
                     f"{percentile(extra, 95):.2f}", f"{float(np.mean(extra)):.2f}", str(len(extra))])
    print(render_table(["per query", "p50 ms", "p95 ms", "mean ms", "n"], rows))


if __name__ == "__main__":
    main()
