"""A BEIR collection cut down to the documents a mid-embedding index has fully embedded, with that index.

    python -m desktop_memory_bench.embedded_subset SNAPSHOT.db ../shared/eval/scifact OUT.db OUT_FOLDER

When a whole corpus cannot be embedded in the time there is (SciFact's 14,438 passages on a loaded machine), a copy
of its index taken mid-embedding still holds complete vectors for the documents it reached. This keeps those
documents (a copy of the database with every other document removed through ``MemoryService.remove_paths``, so
FTS rows, copies and vectors stay consistent; no vector is recomputed), and writes a BEIR folder of them: the
corpus, the train and test queries with a judged document among them, and their judgments restricted to them.
``vector_share --snapshot`` then measures it like any fully embedded library.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.service import MemoryService
from desktop_memory.store import Store

from .dataset import doc_id_from_path
from .runner import BenchOptions, bench_settings


def _subset_split(src: Path, dst: Path, queries: str, qrels: str, keep: set[str]) -> int:
    """Copy one split's judgments on kept documents and the queries they judge; returns the query count."""
    if not (src / qrels).exists():
        return 0
    lines = (src / qrels).read_text(encoding="utf-8").splitlines()
    rows = [line for line in lines[1:] if line.split("\t")[1] in keep]
    (dst / qrels).write_text("\n".join([lines[0], *rows]) + "\n", encoding="utf-8")
    qids = {line.split("\t")[0] for line in rows}
    kept = [line for line in (src / queries).read_text(encoding="utf-8").splitlines()
            if line.strip() and json.loads(line)["_id"] in qids]
    (dst / queries).write_text("".join(line + "\n" for line in kept), encoding="utf-8")
    return len(kept)


def make_subset(snapshot: Path, beir: Path, out_db: Path, out_folder: Path) -> dict[str, int]:
    src = Store(snapshot, readonly=True)
    try:
        src.conn.execute("vacuum into ?", (str(out_db),))
    finally:
        src.conn.close()
    store = Store(out_db)
    try:
        rows = store.conn.execute(
            "select d.path, sum(c.embedded = 0 and c.dup_of is null) from documents d "
            "join chunks c on c.doc_id = d.id group by d.id").fetchall()
    finally:
        store.conn.close()
    drop = [str(path) for path, missing in rows if missing]
    keep = {doc_id_from_path(str(path)) for path, missing in rows if not missing}
    settings = bench_settings(BenchOptions(dataset=beir))
    svc = MemoryService(settings, db_path=out_db, embedder=HashEmbedder(8))  # removal embeds nothing
    try:
        svc.remove_paths(drop)
        stats = svc.stats()
    finally:
        svc.close()
    out_folder.mkdir(parents=True, exist_ok=True)
    with open(beir / "corpus.jsonl", encoding="utf-8") as fh, \
            open(out_folder / "corpus.jsonl", "w", encoding="utf-8") as out:
        out.writelines(line for line in fh if line.strip() and json.loads(line)["_id"] in keep)
    train = _subset_split(beir, out_folder, "queries_train.jsonl", "qrels_train.tsv", keep)
    test = _subset_split(beir, out_folder, "queries.jsonl", "qrels.tsv", keep)
    if not test:  # load_beir wants the test files to exist
        for name in ("queries.jsonl", "qrels.tsv"):
            shutil.copy(beir / name, out_folder / name)
    return {"documents": len(keep), "dropped": len(drop), "passages": stats.chunks, "vectors": stats.vectors,
            "train_queries": train, "test_queries": test}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    figures = make_subset(*(Path(a) for a in args))
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
