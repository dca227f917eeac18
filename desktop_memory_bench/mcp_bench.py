"""MCP latency: every query of a BEIR set through a real MCP client session against `desktop-memory mcp`.

    python -m desktop_memory_bench.mcp_bench ../shared/eval/scifact [--db PATH] [--limit N] [--backend hybrid]

The index is the one `desktop-memory bench` builds and caches (same key; built here if missing). The server runs
as a subprocess (`python -m desktop_memory.cli mcp --db …`) with an empty config folder, so the app's defaults
apply; the client is the SDK's own (`mcp.client.stdio` + `ClientSession`). Timed: start to initialised, the first
search (it waits for the model the server loads once at start), then every query as a warm `search` and as a
`get_context`, each a full JSON-RPC round trip. The server's RSS is read at the end.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from desktop_memory.config import BACKENDS
from desktop_memory.embed import make_embedder

from .dataset import load_beir
from .latency import percentile
from .runner import BenchOptions, bench_settings, open_or_build
from .table import render_table

MB = 1024 * 1024


def _server_rss() -> float | None:
    try:
        import psutil

        kids = [p for p in psutil.Process().children(recursive=True) if "mcp" in " ".join(p.cmdline())]
        return max(p.memory_info().rss for p in kids) / MB if kids else None
    except Exception:
        return None


async def _session(db: Path, queries: list[str], backend: str, top_k: int, embedder: str) -> dict[str, Any]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory(prefix="dm-mcp-bench-") as cfg:
        env = {"DESKTOP_MEMORY_CONFIG_DIR": cfg, "DESKTOP_MEMORY_DATA_DIR": cfg, "PYTHONPATH": str(root)}
        if embedder != "local":
            Path(cfg, "settings.toml").write_text(f'[embedder]\nkind = "{embedder}"\n', encoding="utf-8")
        params = StdioServerParameters(command=sys.executable, args=["-m", "desktop_memory.cli", "mcp", "--db",
                                                                     str(db)], env=env)
        out: dict[str, Any] = {}
        t0 = time.perf_counter()
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            out["initialize_ms"] = (time.perf_counter() - t0) * 1000
            t = time.perf_counter()
            tools = await s.list_tools()
            out["list_tools_ms"] = (time.perf_counter() - t) * 1000
            out["tools"] = [x.name for x in tools.tools]
            t = time.perf_counter()
            first = await s.call_tool("search", {"query": queries[0], "top_k": top_k, "backend": backend})
            out["first_search_ms"] = (time.perf_counter() - t) * 1000
            if first.is_error:
                raise SystemExit(f"search failed: {first.content[0]}")
            for tool, extra in (("search", {"top_k": top_k}), ("get_context", {"top_k": top_k})):
                times, errors, notes = [], 0, set()
                for q in queries:
                    t = time.perf_counter()
                    r = await s.call_tool(tool, {"query": q, "backend": backend, **extra})
                    times.append((time.perf_counter() - t) * 1000)
                    errors += bool(r.is_error)
                    notes.update((r.structured_content or {}).get("notes", []))
                out[tool] = {"n": len(times), "errors": errors, "p50": percentile(times, 50),
                             "p90": percentile(times, 90), "p99": percentile(times, 99), "max": max(times),
                             "notes": sorted(notes)}
            out["server_rss_mb"] = _server_rss()
    return out


def _in_process(settings: Any, db: Path, embedder: Any, queries: list[str], backend: str, top_k: int) -> dict[str, Any]:
    """The same searches without the protocol (the service in this process, warm): the MCP overhead's baseline."""
    from desktop_memory.service import MemoryService

    svc = MemoryService(settings, db_path=db, embedder=embedder)
    try:
        svc.search_outcome(queries[0], backend=backend, top_k=top_k)
        times = []
        for q in queries:
            t = time.perf_counter()
            svc.search_outcome(q, backend=backend, top_k=top_k)
            times.append((time.perf_counter() - t) * 1000)
    finally:
        svc.close()
    return {"n": len(times), "errors": 0, "p50": percentile(times, 50), "p90": percentile(times, 90),
            "p99": percentile(times, 99), "max": max(times), "notes": []}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m desktop_memory_bench.mcp_bench", description=__doc__.split("\n")[0])
    p.add_argument("dataset", type=Path, help="BEIR folder, e.g. ../shared/eval/scifact")
    p.add_argument("--db", type=Path, default=None, help="index to use/build (default: bench's cache)")
    p.add_argument("--limit", type=int, default=None, help="only the first N queries")
    p.add_argument("--backend", choices=BACKENDS, default="hybrid")
    p.add_argument("--top-k", type=int, default=10)
    p.add_argument("--embedder", choices=("local", "hash"), default="local", help="hash: a fast fake, to try it out")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    opts = BenchOptions(dataset=args.dataset, backends=[args.backend], db=args.db, baseline=False,
                        embedder=args.embedder)
    settings = bench_settings(opts)
    ds = load_beir(args.dataset)
    ds.limit_queries(args.limit)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr)

    embedder = make_embedder(settings.embedder)
    db, index = open_or_build(ds, opts, settings, embedder, log)
    queries = list(ds.queries.values())
    report = anyio.run(_session, db, queries, args.backend, args.top_k, args.embedder)
    report["in_process"] = _in_process(settings, db, embedder, queries, args.backend, args.top_k)
    report.update(dataset=ds.name, queries=len(ds.queries), backend=args.backend, top_k=args.top_k, db=str(db),
                  chunks=index.get("chunks"))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"MCP server on {ds.name} ({report['chunks']} chunks), {report['queries']} queries, {args.backend}, "
          f"top_k {args.top_k}; round trips through a real stdio client session")
    print(f"start → initialised {report['initialize_ms']:.0f} ms · list_tools {report['list_tools_ms']:.1f} ms · "
          f"first search (waits for the model) {report['first_search_ms']:.0f} ms · server RSS "
          + (f"{report['server_rss_mb']:.0f} MB" if report["server_rss_mb"] else "-"))
    rows = [[tool, str(report[tool]["n"]), f"{report[tool]['p50']:.1f}", f"{report[tool]['p90']:.1f}",
             f"{report[tool]['p99']:.1f}", f"{report[tool]['max']:.1f}", str(report[tool]["errors"])]
            for tool in ("search", "get_context")]
    ip = report["in_process"]
    rows.append(["(service.search_outcome, in process)", str(ip["n"]), f"{ip['p50']:.1f}", f"{ip['p90']:.1f}",
                 f"{ip['p99']:.1f}", f"{ip['max']:.1f}", "-"])
    print(render_table(["tool (warm)", "calls", "p50 ms", "p90 ms", "p99 ms", "max ms", "errors"], rows))
    for tool in ("search", "get_context"):
        for note in report[tool]["notes"]:
            print(f"note ({tool}): {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
