"""How long Cancel takes to stop embedding: the real local model embeds a real folder, Cancel is pressed after a
few seconds, and the time until the job returns is measured (several trials per slice size).

    python -m desktop_memory_bench.cancel_latency ../shared/eval/mddocs --trials 5 --slices 64,16

The pipeline checks for a cancel between slices of ``EMBED_SLICE`` chunks, so the wait is about one slice's
embedding time; vectors committed before the cancel stay.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

from desktop_memory.config import Settings
from desktop_memory.ingest import pipeline
from desktop_memory.service import MemoryService

from .table import render_table


def _trial(folder: Path, db: Path, after_s: float) -> tuple[float, int]:
    svc = MemoryService(Settings(), db_path=db)
    try:
        svc.index_paths([folder], embed=False)
        svc.load_embedder()
        cancel = threading.Event()
        out: dict[str, int] = {}

        def work() -> None:
            out["embedded"] = svc.embed_pending(cancel=cancel).chunks_embedded

        t = threading.Thread(target=work)
        t.start()
        time.sleep(after_s)
        pressed = time.perf_counter()
        cancel.set()
        t.join()
        return time.perf_counter() - pressed, out.get("embedded", 0)
    finally:
        svc.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m desktop_memory_bench.cancel_latency", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder", type=Path)
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--after", type=float, default=3.0, help="seconds of embedding before Cancel")
    p.add_argument("--slices", default="64,16", help="EMBED_SLICE values to compare")
    args = p.parse_args(argv)
    rows = []
    saved = pipeline.EMBED_SLICE
    try:
        for size in (int(s) for s in args.slices.split(",")):
            pipeline.EMBED_SLICE = size
            waits = []
            for i in range(args.trials):
                with tempfile.TemporaryDirectory(prefix="dm-cancel-") as tmp:
                    wait, _ = _trial(args.folder.resolve(), Path(tmp) / f"c{i}.db", args.after)
                waits.append(wait * 1000)
            rows.append([str(size), f"{statistics.median(waits):.0f}", f"{max(waits):.0f}"])
    finally:
        pipeline.EMBED_SLICE = saved
    print(render_table(["EMBED_SLICE", "Cancel → stopped p50 (ms)", "max (ms)"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
