"""Behaviour hash (issue 31, item 9): one SHA-256 over every row of a freshly built library, and one over the
ranked results of a fixed query set, so a refactor can show that it changed nothing a person could see.

    python -m desktop_memory_bench.behaviour_hash scifact      # SciFact, the deterministic hash embedder
    python -m desktop_memory_bench.behaviour_hash cranfield    # Cranfield, the real local ONNX model

The corpus is written as Markdown files and indexed into a new library exactly as ``desktop-memory bench`` does
(``runner.build_index``: the real pipeline through the service, read → chunk → FTS → embed → vectors), so when the
write route changes, this follows it. Then every query of the dataset's test split runs through
``MemoryService.search_outcome`` on each backend at the app's default ``top_k``; a result is named by (file relative to
the corpus folder, passage ``ord``, match strength), never by a row id. What the row hash leaves out, and why, is in
``behaviour_rows.py``.

``--save DIR`` writes each table's canonical rows (``<table>.jsonl``, sorted) and the rankings, so two runs can be
compared with ``diff``; ``--against DIR`` does that comparison itself: which tables differ, in how many rows, and
for the vector tables the largest absolute difference of any stored float (the real model may round the last bit
differently when a batch is composed differently: that shows up as a tiny difference, not as a changed passage).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from desktop_memory.config import BACKENDS
from desktop_memory.embed import make_embedder
from desktop_memory.errors import UserError

from .behaviour_rows import ChunkKey, TableRows, combined_sha256, library_rows
from .dataset import BeirDataset, corpus_fingerprint, load_beir
from .eval_data import SHARED_EVAL
from .table import render_table


@dataclass(frozen=True)
class Preset:
    data: Path
    embedder: str  # "hash" (deterministic test embedder) or "local" (the bundled ONNX model)


PRESETS = {
    "scifact": Preset(SHARED_EVAL / "scifact", "hash"),
    "cranfield": Preset(SHARED_EVAL / "cranfield", "local"),
}


def subset(ds: BeirDataset, docs: int | None, queries: int | None) -> None:
    """The first ``docs`` documents (corpus file order) and ``queries`` queries: a quick, still reproducible run."""
    if docs:
        ds.corpus = dict(list(ds.corpus.items())[:docs])
    ds.limit_queries(queries)


def build(ds: BeirDataset, db: Path, embedder_kind: str, log: Callable[[str], None]) -> tuple[Any, Any]:
    """Index the corpus into a new library at ``db`` the way `bench` does; returns (settings, embedder)."""
    from .runner import BenchOptions, bench_settings, build_index, cache_key

    settings = bench_settings(BenchOptions(dataset=ds.root, embedder=embedder_kind))  # type: ignore[arg-type]
    embedder = make_embedder(settings.embedder)
    key = cache_key(corpus_fingerprint(ds.root), settings, embedder)
    figures = build_index(ds, db, settings, embedder, key, log, "md", baseline=False)
    log(f"indexed {figures['documents']} documents, {figures['chunks']} chunks, {figures['vectors']} vectors "
        f"in {figures['total_s']:.1f} s")
    return settings, embedder


def rankings(db: Path, ds: BeirDataset, settings: Any, embedder: Any,
             names: dict[int, ChunkKey]) -> dict[str, dict[str, list[Any]]]:
    """{backend: {query id: [[relative file, passage ord, strength], ...]}} at the app's default top_k."""
    from desktop_memory.service import MemoryService

    svc = MemoryService(settings, db_path=db, embedder=embedder)
    out: dict[str, dict[str, list[Any]]] = {}
    try:
        for backend in BACKENDS:
            per_query: dict[str, list[Any]] = {}
            for qid, text in ds.queries.items():
                res = svc.search_outcome(text, backend=backend).results
                per_query[qid] = [[*names.get(r.chunk_id, ("?", r.chunk_id)), r.strength] for r in res]
            out[backend] = per_query
    finally:
        svc.close()
    return out


def rankings_sha256(ranked: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(ranked, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def save(folder: Path, tables: list[TableRows], ranked: dict[str, dict[str, list[Any]]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for t in tables:
        (folder / f"{t.name.split()[0]}.jsonl").write_text("".join(line + "\n" for line in t.lines), encoding="utf-8")
    (folder / "rankings.json").write_text(json.dumps(ranked, sort_keys=True, indent=1, ensure_ascii=False),
                                          encoding="utf-8")


def _floats(line: str) -> tuple[str, np.ndarray] | None:
    row = json.loads(line)
    emb = row.get("embedding") if isinstance(row, dict) else None
    if not isinstance(emb, dict):
        return None
    return json.dumps(row.get("id")), np.frombuffer(bytes.fromhex(emb["hex"]), dtype="<f4")


def compare(folder: Path, tables: list[TableRows], ranked: dict[str, dict[str, list[Any]]]) -> list[str]:
    """What differs from a run saved with --save: per table the rows only on one side, per vector table the largest
    float difference of the rows both hold, per backend the queries whose ranking changed."""
    notes: list[str] = []
    for t in tables:
        path = folder / f"{t.name.split()[0]}.jsonl"
        old = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
        if old == t.lines:
            continue
        gone, new = set(old) - set(t.lines), set(t.lines) - set(old)
        note = f"{t.name}: {len(old)} -> {len(t.lines)} rows, {len(gone)} only before, {len(new)} only now"
        before = dict(f for f in map(_floats, gone) if f is not None)
        after = dict(f for f in map(_floats, new) if f is not None)
        both = [k for k in before if k in after and before[k].shape == after[k].shape]
        if both:
            delta = max(float(np.max(np.abs(before[k] - after[k]))) for k in both)
            note += f"; {len(both)} vectors changed, largest |difference| {delta:.3g}"
        notes.append(note)
    path = folder / "rankings.json"
    old_ranked = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    for backend, per_query in ranked.items():
        changed = [q for q in per_query if old_ranked.get(backend, {}).get(q) != per_query[q]]
        if changed:
            notes.append(f"rankings {backend}: {len(changed)} of {len(per_query)} queries differ "
                         f"(first: {changed[0]})")
    return notes


def run(name: str, data: Path, embedder_kind: str, docs: int | None, queries: int | None,
        keep_db: Path | None, log: Callable[[str], None]) -> tuple[list[TableRows], dict[str, Any], str]:
    ds = load_beir(data)
    subset(ds, docs, queries)
    with tempfile.TemporaryDirectory(prefix="dm-behaviour-") as tmp:
        db = keep_db.expanduser().resolve() if keep_db else Path(tmp) / f"{name}.db"
        if keep_db and db.exists():
            raise UserError(f"{db} already exists; the behaviour hash needs a new library.")
        settings, embedder = build(ds, db, embedder_kind, log)
        tables, names = library_rows(db)
        log(f"searching {len(ds.queries)} queries on {len(BACKENDS)} backends …")
        ranked = rankings(db, ds, settings, embedder, names)
        model = embedder.model_id
    return tables, ranked, model


def report(title: str, tables: list[TableRows], ranked: dict[str, dict[str, list[Any]]]) -> str:
    rows = [[t.name, str(len(t.lines)), t.sha256] for t in tables]
    rows.append(["ALL ROWS", str(sum(len(t.lines) for t in tables)), combined_sha256(tables)])
    for backend, per_query in ranked.items():
        rows.append([f"rankings {backend}", str(sum(len(v) for v in per_query.values())), rankings_sha256(per_query)])
    rows.append(["ALL RANKINGS", str(len(ranked)), rankings_sha256({b: rankings_sha256(p) for b, p in ranked.items()})])
    return title + "\n" + render_table(["table", "rows", "sha256"], rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m desktop_memory_bench.behaviour_hash",
                                description=(__doc__ or "").split("\n")[0])
    p.add_argument("preset", choices=sorted(PRESETS), help="scifact (hash embedder) or cranfield (real model)")
    p.add_argument("--data", type=Path, help="the BEIR folder (default: ../shared/eval/<preset>)")
    p.add_argument("--docs", type=int, help="only the first N corpus documents (a quicker, different hash)")
    p.add_argument("--queries", type=int, help="only the first N judged queries")
    p.add_argument("--db", type=Path, help="build the library here and keep it (must not exist)")
    p.add_argument("--save", type=Path, help="write the canonical rows and rankings to this folder")
    p.add_argument("--against", type=Path, help="compare with a folder written by --save; exit 1 if they differ")
    args = p.parse_args(argv)
    preset = PRESETS[args.preset]

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    try:
        tables, ranked, model = run(args.preset, args.data or preset.data, preset.embedder, args.docs, args.queries,
                                    args.db, log)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    subset_note = "".join(f", first {n} {w}" for n, w in ((args.docs, "documents"), (args.queries, "queries")) if n)
    print(report(f"behaviour hash: {args.preset} ({model}{subset_note}), "
                 f"{time.perf_counter() - t0:.0f} s", tables, ranked))
    if args.save:
        save(args.save, tables, ranked)
    if args.against:
        notes = compare(args.against, tables, ranked)
        print("\n".join(notes) if notes else f"identical to {args.against}")
        return 1 if notes else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
