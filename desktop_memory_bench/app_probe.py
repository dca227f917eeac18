"""The app's own memory at scale: a fresh process indexes new files into a big library and searches it.

``bench --scale`` runs this after each step, so the peak RSS it reports belongs to the app's work only (the
scale harness itself holds the base corpus, the synthesiser and a brute-force reference in memory). The probe
opens the library as the app does (``MemoryService`` with the default local model), indexes ``--docs`` (real
files: extract, chunk, embed, store), then runs every query through hybrid, keyword and dense search, and prints
one JSON object: peak RSS, what it indexed, and how long it took.

    python -m desktop_memory_bench.app_probe --db scale.db --docs some/folder --queries queries.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .latency import process_peak_rss

if TYPE_CHECKING:
    from desktop_memory.config import Settings

BACKENDS = ("hybrid", "keyword", "dense")


def memory_now() -> dict[str, float]:
    """This process's RSS now and its peak so far, and SQLite's own heap (page caches, FTS buffers), in MB: read at
    each phase so the report says what holds the peak."""
    import apsw

    out = {"sqlite_mb": apsw.memory_used() / 2**20, "sqlite_peak_mb": apsw.memory_high_water() / 2**20}
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    out["rss_mb" if line.startswith("VmRSS") else "peak_rss_mb"] = int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return {k: round(v, 1) for k, v in out.items()}


def probe(db: Path, docs: Path | None, queries: list[str], settings: Settings | None = None) -> dict[str, Any]:
    """Index ``docs`` into ``db`` and run ``queries`` on each backend; peak RSS of this process, in MB."""
    from desktop_memory.config import Settings
    from desktop_memory.service import MemoryService

    phases = {"start": memory_now()}
    svc = MemoryService(settings or Settings(), db_path=db)
    try:
        phases["opened"] = memory_now()
        t0 = time.perf_counter()
        summary = svc.index_paths([docs]) if docs is not None else None
        index_s = time.perf_counter() - t0
        rss_after_index = process_peak_rss() / 2**20
        phases["indexed"] = memory_now()
        t0 = time.perf_counter()
        for backend in BACKENDS:
            for q in queries:
                svc.search_outcome(q, backend=backend)
            phases[backend] = memory_now()
        search_s = time.perf_counter() - t0
        stats = svc.stats()
        phases["connections"] = {"open": float(svc.open_connections())}
    finally:
        svc.close()
    return {
        "chunks": stats.chunks,
        "indexed_files": summary.indexed if summary else 0,
        "chunks_embedded": summary.chunks_embedded if summary else 0,
        "index_s": index_s,
        "searches": len(queries) * len(BACKENDS),
        "search_s": search_s,
        "peak_rss_after_index_mb": rss_after_index,
        "peak_rss_mb": process_peak_rss() / 2**20,
        "phases": phases,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m desktop_memory_bench.app_probe", description=__doc__.split("\n")[0])
    p.add_argument("--db", type=Path, required=True)
    p.add_argument("--docs", type=Path, help="folder of files to index first")
    p.add_argument("--queries", type=Path, required=True, help="JSON list of query strings")
    p.add_argument("--settings", type=Path, help="JSON settings (the benchmark's; default: the app's defaults)")
    args = p.parse_args(argv)
    from desktop_memory.settings_file import validate_settings

    queries = [str(q) for q in json.loads(args.queries.read_text(encoding="utf-8"))]
    settings = validate_settings(json.loads(args.settings.read_text(encoding="utf-8"))) if args.settings else None
    print(json.dumps(probe(args.db, args.docs, queries, settings)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
