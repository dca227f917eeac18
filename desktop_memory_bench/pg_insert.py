"""Insertion into a PostgreSQL library: a SQLite library copied into an empty database by ``desktop-memory copy``'s
own code (library_copy.py), with the time of each step of the target store.

    python -m desktop_memory_bench.pg_insert LIBRARY.db URL [URL ...] [--plain] [--passages N]

Each URL must name an empty database with pgvector (one run per URL, so back-to-back repeats share the machine's
load). Prints one table: passages/s of the document writes (rows, tokenizing, term statistics), vectors/s of the
vector writes (binary COPY), the two together, and the whole copy (reading the source and the index build
included); with the load average. The active model's vectors are COPYed inside the document writes
(``DocumentWrite.vectors``): that COPY is timed as the vectors' part, as another model's (``store_vectors``) is.
``--plain``: without tokenizing the next slice ahead on a second connection
(store/postgres/tokens_ahead.py), each write tokenizing in its own statement as an indexing write does.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from desktop_memory.errors import Cancelled
from desktop_memory.library_copy_job import copy_library
from desktop_memory.store.location import redacted


def timed_copy(source: Path, url: str, plain: bool = False, passages: int = 0) -> dict[str, Any]:
    """One copy, with the seconds spent in the target's ``write_documents``, ``store_vectors`` and index build;
    ``passages``: stopped once that many are written (a prefix of the library: no index build)."""
    from desktop_memory.store.postgres.store import PgStore
    from desktop_memory.store.postgres.vectors import PgVectors

    spent: dict[str, float] = defaultdict(float)
    originals = {name: getattr(PgStore, name) for name in ("write_documents", "store_vectors", "prepare_writes")}
    store_new = PgVectors.store_new
    if plain:
        PgStore.prepare_writes = lambda self, docs: None  # type: ignore[method-assign]

    written = [0, 0]  # passages, vectors (of a stopped copy, whose summary is not returned)
    stop = threading.Event()

    def wrap(name: str, fn: Any) -> Any:
        def inner(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - t
                if name == "write_documents":
                    written[0] += sum(len(d.chunks) for d in args[1])
                    if passages and written[0] >= passages:
                        stop.set()
                else:  # the active model's vectors (inside the writes), or another model's
                    written[1] += len(args[1])
        return inner

    for name in ("write_documents", "store_vectors"):
        setattr(PgStore, name, wrap(name, originals[name]))
    PgVectors.store_new = wrap("store_new", store_new)  # type: ignore[method-assign]  # (inside write_documents)
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    try:
        copy_library(source, url, machine=("bench", "bench"), cancel=stop)
    except Cancelled:
        pass  # the prefix asked for
    finally:
        for name, fn in originals.items():
            setattr(PgStore, name, fn)
        PgVectors.store_new = store_new  # type: ignore[method-assign]
    total = time.perf_counter() - t0
    return {"url": redacted(url), "passages": written[0], "vectors": written[1],
            "write_s": spent["write_documents"] - spent["store_new"],
            "vector_s": spent["store_vectors"] + spent["store_new"], "total_s": total,
            "other_s": total - spent["write_documents"] - spent["store_vectors"],
            "load": (load0 + os.getloadavg()[0]) / 2}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("library", type=Path, help="a SQLite library with vectors (e.g. the one `bench --db` built)")
    ap.add_argument("urls", nargs="+", help="postgresql:// URLs of empty databases with pgvector")
    ap.add_argument("--plain", action="store_true", help="no tokenizing ahead on side connections")
    ap.add_argument("--passages", type=int, default=0,
                    help="stop once this many passages are written (a prefix: quicker, no index build)")
    args = ap.parse_args(argv)
    print("| run | passages | passages/s (writes) | vectors/s (COPY) | passages/s (writes and vectors) "
          "| copy total s | passages/s (whole copy) | of which reading, index, rest s | load |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, url in enumerate(args.urls, 1):
        r = timed_copy(args.library, url, args.plain, args.passages)
        print(f"| {n} | {r['passages']:,} | {r['passages'] / max(r['write_s'], 1e-9):,.0f} | "
              f"{r['vectors'] / max(r['vector_s'], 1e-9):,.0f} | "
              f"{r['passages'] / max(r['write_s'] + r['vector_s'], 1e-9):,.0f} | {r['total_s']:.1f} | "
              f"{r['passages'] / r['total_s']:,.0f} | {r['other_s']:.1f} | {r['load']:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
