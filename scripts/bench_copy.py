"""How fast `desktop-memory copy` moves a library (docs/SHARED.md, docs/BENCHMARKS.md "Copying a library").

Indexes a folder of documents into a temporary SQLite library with the hash embedder (384-d, so the vectors are the
size MiniLM's are), then times `copy` into a second library, and a second run over the finished copy (what a
resumed copy pays for the documents already there). A PostgreSQL target is given with --to.

    python scripts/bench_copy.py ../shared/eval/mddocs [--to postgresql://me@server/bench]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.library_copy import copy_library
from desktop_memory.library_location import parse_location, shown
from desktop_memory.service import MemoryService


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, help="documents to index into the source library")
    ap.add_argument("--to", default=None, help="the target (default: a temporary SQLite file)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="dm-copy-bench-"))
    source = tmp / "source.db"
    target = parse_location(args.to) if args.to else tmp / "copy.db"
    svc = MemoryService(Settings(), db_path=source, embedder=HashEmbedder(384))
    try:
        svc.index_paths([args.folder])
        st = svc.stats()
    finally:
        svc.close()
    started = time.perf_counter()
    first = copy_library(source, target, machine=("bench", "bench"))
    took = time.perf_counter() - started
    print(f"{sum(st.documents.values()):,} documents, {st.chunks:,} passages, {st.vectors:,} vectors "
          f"→ {shown(target)}: {took:.2f} s, {st.chunks / took:,.0f} passages/s "
          f"({first.documents:,} written, {sum(first.vectors.values()):,} vectors)")
    started = time.perf_counter()
    again = copy_library(source, target, machine=("bench", "bench"))
    print(f"run again over the finished copy: {time.perf_counter() - started:.2f} s "
          f"({again.unchanged:,} documents already there)")


if __name__ == "__main__":
    main()
