"""The processes of the two-writers-and-a-reader benchmark (shared_writers.py): each one machine of its own.

    python -m desktop_memory_bench.shared_roles writer URL --folder DIR --name desktop --go GO_FILE
    python -m desktop_memory_bench.shared_roles reader URL --queries Q.json --name office --go GO_FILE --stop STOP

Why separate processes: two machines share a library through the server only (their own connections, their own
advisory-lock sessions, their own config folder and so their own machine id); threads of one process would share
a Python interpreter and hide nothing of that. The parent sets ``DESKTOP_MEMORY_CONFIG_DIR`` per process (the
config folder is the machine: desktop_memory/machine.py). Each process prints ``ready`` once its library is open,
waits for the ``GO_FILE`` so all start together, and prints one JSON line with its figures at the end.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from desktop_memory.config import Settings
from desktop_memory.embed import make_embedder
from desktop_memory.embed.base import Embedder
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.service import MemoryService

POLL_S = 0.01


def make_service(url: str, name: str, embedder: str) -> MemoryService:
    """The service of one machine named ``name`` (its config folder comes from the environment)."""
    settings = Settings(machine_name=name)
    chosen: Embedder = HashEmbedder(384) if embedder == "hash" else make_embedder(settings.embedder)
    return MemoryService(settings, db_path=url, embedder=chosen)


def _wait_for(path: Path, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} did not appear within {timeout_s:.0f} s")
        time.sleep(POLL_S)


def run_writer(url: str, folder: Path, name: str, embedder: str, go: Path) -> dict[str, Any]:
    """Index ``folder`` (reading, passages, vectors) once every process is ready; its figures."""
    svc = make_service(url, name, embedder)
    try:
        print("ready", flush=True)
        _wait_for(go)
        started = time.perf_counter()
        summary = svc.index_paths([folder])
        seconds = time.perf_counter() - started
        problems = [f"{o.path}: {o.reason}" for o in summary.problems()]
        return {"role": "writer", "name": name, "machine_id": svc.machine[0], "folder": str(folder),
                "seconds": seconds, "indexed": summary.indexed, "failed": summary.failed, "skipped": summary.skipped,
                "passages": summary.chunks_added, "vectors": summary.chunks_embedded,
                "embed_error": summary.embed_error, "problems": problems[:5]}
    finally:
        svc.close()


def run_reader(url: str, queries: list[str], name: str, embedder: str, backend: str, go: Path,
               stop: Path) -> dict[str, Any]:
    """Search the queries in turn (hybrid: both the keyword and the dense lane) until ``stop`` appears."""
    svc = make_service(url, name, embedder)
    latencies: list[float] = []
    errors: list[str] = []
    hits = 0
    try:
        print("ready", flush=True)
        _wait_for(go)
        i = 0
        while not stop.exists():
            query = queries[i % len(queries)]
            i += 1
            t0 = time.perf_counter()
            try:
                hits += bool(svc.search_outcome(query, backend=backend, top_k=10).results)
            except Exception as exc:  # the benchmark counts every failure instead of stopping at the first
                errors.append(f"{type(exc).__name__}: {exc}")
                continue
            latencies.append((time.perf_counter() - t0) * 1000)
        return {"role": "reader", "name": name, "searches": len(latencies), "with_results": hits,
                "latencies_ms": latencies, "errors": errors[:20], "error_count": len(errors)}
    finally:
        svc.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("role", choices=["writer", "reader"])
    ap.add_argument("url")
    ap.add_argument("--name", required=True, help="this machine's readable name")
    ap.add_argument("--go", type=Path, required=True, help="start when this file appears")
    ap.add_argument("--folder", type=Path, help="writer: the folder to index")
    ap.add_argument("--queries", type=Path, help="reader: a JSON list of queries")
    ap.add_argument("--stop", type=Path, help="reader: stop when this file appears")
    ap.add_argument("--backend", default="hybrid")
    ap.add_argument("--embedder", choices=["hash", "local"], default="hash")
    args = ap.parse_args(argv)
    try:
        if args.role == "writer":
            out = run_writer(args.url, args.folder, args.name, args.embedder, args.go)
        else:
            queries = json.loads(args.queries.read_text(encoding="utf-8"))
            out = run_reader(args.url, queries, args.name, args.embedder, args.backend, args.go, args.stop)
    except Exception as exc:  # one line the parent reads as this process's error
        traceback.print_exc()
        out = {"role": args.role, "name": args.name, "fatal": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(out), flush=True)
    return 0 if "fatal" not in out else 1


if __name__ == "__main__":
    sys.exit(main())
