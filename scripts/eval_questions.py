"""Hit@1, Hit@5 and MRR@10 of each backend on a TSV of natural questions with the file each should find.

    python scripts/eval_questions.py --db md.db docs/eval/mddocs-questions.tsv

The database must already hold the documents (e.g. `desktop-memory --db md.db index ../shared/eval/mddocs`).
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import time

from desktop_memory.service import MemoryService
from desktop_memory.settings_file import load_settings


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("questions")
    ap.add_argument("--db", required=True)
    ap.add_argument("--backends", default="hybrid,keyword,bm25,dense")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    with open(args.questions, encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    svc = MemoryService(load_settings(), db_path=args.db)
    print(f"{len(rows)} questions, db {args.db}")
    print(f"{'backend':<8} {'hit@1':>6} {'hit@5':>6} {'mrr@10':>7} {'p50 ms':>7}")
    for backend in args.backends.split(","):
        hits1 = hits5 = 0
        rr, lat = [], []
        svc.search_outcome("warm up", backend=backend)
        for row in rows:
            t = time.perf_counter()
            results = svc.search_outcome(row["question"], backend=backend, top_k=10).results
            lat.append((time.perf_counter() - t) * 1000)
            files: list[str] = []
            for r in results:  # rank files, not chunks
                if r.source not in files:
                    files.append(r.source)
            rank = next((i for i, f in enumerate(files, 1) if f.endswith(row["expected_path_suffix"])), None)
            hits1 += rank == 1
            hits5 += rank is not None and rank <= 5
            rr.append(1 / rank if rank else 0.0)
            if args.verbose and (rank is None or rank > 1):
                print(f"  [{backend}] rank {rank}: {row['question']}  → {files[:3]}")
        n = len(rows)
        mrr, p50 = statistics.mean(rr), statistics.median(lat)
        print(f"{backend:<8} {hits1 / n:>6.2f} {hits5 / n:>6.2f} {mrr:>7.3f} {p50:>7.1f}")
    svc.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
