"""What a model server adds per query, split into the model's own work and the protocol around it.

    python -m desktop_memory_bench.server_latency DATASET --db INDEX --url http://127.0.0.1:PORT --model NAME
        [--queries 40] [--depth 30]

For each of the dataset's first queries: the query embedding through the app's OpenAI-compatible embedder (the
"embed call" of a search), and the top ``depth`` passages of the app's hybrid search reranked through the app's
reranker client, both timed end to end, as a search pays them. The same two requests are then sent once more with
the same JSON bodies on a kept-alive connection, reading the server's own model time from its ``X-Compute-Ms`` header
(the loopback test server, ``python -m tests.support.openai_server``, sends it): round trip minus model time is the
protocol's cost (HTTP, JSON both ways, the server's parsing). Against a real server without the header only the end
to end figures are printed. Prints p50/p95/mean tables.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from desktop_memory.config import EmbedderSettings, Settings
from desktop_memory.embed.openai_compat import OpenAICompatEmbedder
from desktop_memory.errors import EmbedderError
from desktop_memory.retrieve.rerank import HttpReranker

from .dataset import load_beir
from .latency import percentile
from .table import render_table


def _raw(client: object, url: str, body: dict[str, object]) -> tuple[float, float | None]:
    """(round trip ms, the server's model ms from X-Compute-Ms or None)."""
    t0 = time.perf_counter()
    resp = client.post(url, json=body)  # type: ignore[attr-defined]
    total = (time.perf_counter() - t0) * 1000
    resp.raise_for_status()
    header = resp.headers.get("x-compute-ms")
    return total, float(header) if header else None


def measure(dataset: Path, db: Path, url: str, model: str, n_queries: int, depth: int) -> dict[str, list[float]]:
    import httpx

    from desktop_memory.service import MemoryService

    ds = load_beir(dataset, "test")
    queries = list(ds.queries.values())[:n_queries]
    remote = OpenAICompatEmbedder(EmbedderSettings(kind="openai", openai_url=url, openai_model=model))
    reranker = HttpReranker(url, model, timeout_s=60)
    svc = MemoryService(Settings(embedder=remote.settings), db_path=db, embedder=remote)
    client = httpx.Client(timeout=60, trust_env=False)
    times: dict[str, list[float]] = {k: [] for k in ("embed call", "embed: model", "embed: protocol",
                                                     "rerank call", "rerank: model", "rerank: protocol")}
    failures = 0
    try:
        remote.embed_query(queries[0])  # warm the connection and the server's model
        reranker.rerank(queries[0], ["warm", "up"])
        for q in queries:
            t0 = time.perf_counter()
            remote.embed_query(q)
            times["embed call"].append((time.perf_counter() - t0) * 1000)
            texts = [r.text for r in svc.search_outcome(q, backend="hybrid", top_k=depth).results][:depth]
            t0 = time.perf_counter()
            try:
                reranker.rerank(q, texts)
            except EmbedderError:  # counted, never hidden: the table's n says how many answered
                failures += 1
                continue
            times["rerank call"].append((time.perf_counter() - t0) * 1000)
            bodies: list[tuple[str, str, dict[str, object]]] = [
                ("embed", "/v1/embeddings", {"model": model, "input": [q]}),
                ("rerank", "/v1/rerank", {"model": model, "query": q, "documents": texts, "top_n": len(texts)})]
            for what, path, body in bodies:
                total, model_ms = _raw(client, url.rstrip("/") + path, body)
                if model_ms is not None:
                    times[f"{what}: model"].append(model_ms)
                    times[f"{what}: protocol"].append(total - model_ms)
    finally:
        svc.close()
        remote.close()
        reranker.close()
        client.close()
    if failures:
        print(f"{failures} rerank call(s) failed (timeout 60 s) and are left out", flush=True)
    return times


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dataset", type=Path)
    p.add_argument("--db", type=Path, required=True, help="an index built with --embedder openai by `bench`")
    p.add_argument("--url", required=True, help="the server, e.g. http://127.0.0.1:8080 (no /v1)")
    p.add_argument("--model", required=True)
    p.add_argument("--queries", type=int, default=40)
    p.add_argument("--depth", type=int, default=30)
    args = p.parse_args()
    times = measure(args.dataset, args.db, args.url, args.model, args.queries, args.depth)
    rows = [[name, f"{percentile(v, 50):.2f}", f"{percentile(v, 95):.2f}", f"{float(np.mean(v)):.2f}", str(len(v))]
            for name, v in times.items() if v]
    print(render_table(["per query", "p50 ms", "p95 ms", "mean ms", "n"], rows))


if __name__ == "__main__":
    main()
