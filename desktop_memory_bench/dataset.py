"""BEIR-format datasets: loading, materialising each document as a text file, and fingerprinting."""

from __future__ import annotations

import csv
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from desktop_memory.errors import UserError

DOC_FORMAT_VERSION = "1"  # bump when the way a corpus document becomes a file changes (invalidates caches)
SPLIT_FILES = {
    "test": ("queries.jsonl", "qrels.tsv"),
    "train": ("queries_train.jsonl", "qrels_train.tsv"),
}


@dataclass
class BeirDataset:
    name: str
    root: Path
    split: str
    corpus: dict[str, tuple[str, str]]  # doc id -> (title, text)
    queries: dict[str, str]  # query id -> text (only queries that have judgments)
    qrels: dict[str, dict[str, int]]  # query id -> {doc id: grade > 0}
    notes: list[str] = field(default_factory=list)

    def limit_queries(self, n: int | None) -> None:
        """Keep the first ``n`` judged queries (file order), so a quick run is still reproducible."""
        if n is None or n <= 0 or n >= len(self.queries):
            return
        keep = list(self.queries)[:n]
        self.queries = {q: self.queries[q] for q in keep}
        self.qrels = {q: self.qrels[q] for q in keep}


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    with open(path, encoding="utf-8") as fh:
        for n, raw in enumerate(fh, start=1):
            line = raw.strip()
            if not line:
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise UserError(f"{path}:{n} is not valid JSON: {exc.msg}") from exc
    return rows


def read_corpus(root: Path) -> dict[str, tuple[str, str]]:
    path = root / "corpus.jsonl"
    if not path.is_file():
        raise UserError(f"{root} is not a BEIR dataset folder: corpus.jsonl is missing.")
    corpus: dict[str, tuple[str, str]] = {}
    for row in _read_jsonl(path):
        if "_id" not in row:
            raise UserError(f"{path}: a document has no _id.")
        corpus[str(row["_id"])] = (str(row.get("title") or ""), str(row.get("text") or ""))
    return corpus


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, delimiter="\t")
        for n, cells in enumerate(reader, start=1):
            if not cells or (n == 1 and not cells[-1].strip().lstrip("-").isdigit()):
                continue  # blank line or the header
            row = [cells[0], cells[2], cells[3]] if len(cells) == 4 else cells  # TREC style: qid iter docid rel
            if len(row) != 3:
                raise UserError(f"{path}:{n}: expected query-id, corpus-id, score.")
            qid, did, score = row[0].strip(), row[1].strip(), int(row[2])
            if score > 0:
                qrels.setdefault(qid, {})[did] = score
    return qrels


def load_beir(root: Path | str, split: str = "test", *, name: str | None = None) -> BeirDataset:
    root = Path(root).expanduser()
    if not root.is_dir():
        from .eval_data import missing_data

        raise UserError(missing_data(root, "a BEIR folder: corpus.jsonl, queries.jsonl, qrels.tsv"))
    if split not in SPLIT_FILES:
        raise UserError(f"Unknown split {split!r}; use test or train.")
    qfile, rfile = SPLIT_FILES[split]
    if not (root / qfile).is_file() or not (root / rfile).is_file():
        raise UserError(f"{root} has no {split} split ({qfile} and {rfile} are needed).")
    corpus = read_corpus(root)
    qrels = read_qrels(root / rfile)
    queries_all = {str(r["_id"]): str(r.get("text") or "") for r in _read_jsonl(root / qfile)}
    notes = []
    missing_docs = {d for judged in qrels.values() for d in judged if d not in corpus}
    if missing_docs:
        notes.append(f"{len(missing_docs)} judged document ids are not in the corpus")
    queries = {q: t for q, t in queries_all.items() if q in qrels}
    dropped = [q for q in qrels if q not in queries]
    if dropped:
        notes.append(f"{len(dropped)} judged query ids have no query text (ignored)")
        qrels = {q: r for q, r in qrels.items() if q in queries}
    return BeirDataset(name=name or root.name, root=root, split=split, corpus=corpus, queries=queries, qrels=qrels,
                       notes=notes)


DOC_FORMATS = ("md", "txt")


def doc_text(title: str, text: str, fmt: str = "md") -> str:
    """A corpus document as a file: BEIR's flat setting (title + text).

    ``md``: the title is a level-1 heading, so the app's Markdown chunker carries it into every chunk's
    breadcrumb (as it does for any titled note); ``txt``: the title is just the first paragraph."""
    title, text = title.strip(), text.strip()
    if not title:
        return f"{text}\n"
    if fmt == "md":
        return f"# {' '.join(title.split())}\n\n{text}\n"  # a heading is one line
    return f"{title}\n\n{text}\n"


def doc_filename(doc_id: str, fmt: str = "md") -> str:
    """A reversible, filesystem-safe file name for a corpus id."""
    return quote(doc_id, safe="").replace("%", "=") + "." + fmt


def doc_id_from_path(path: str) -> str:
    name = os.path.basename(path)
    for ext in DOC_FORMATS:
        if name.endswith("." + ext):
            name = name[: -len(ext) - 1]
            break
    return unquote(name.replace("=", "%"))


def materialise(corpus: dict[str, tuple[str, str]], folder: Path, fmt: str = "md") -> int:
    """Write every corpus document as ``folder/<id>.<fmt>``; returns the total bytes written."""
    folder.mkdir(parents=True, exist_ok=True)
    total = 0
    for doc_id, (title, text) in corpus.items():
        data = doc_text(title, text, fmt).encode("utf-8")
        (folder / doc_filename(doc_id, fmt)).write_bytes(data)
        total += len(data)
    return total


def corpus_fingerprint(root: Path) -> str:
    """sha256 of corpus.jsonl (the index depends on nothing else in the folder)."""
    h = hashlib.sha256()
    with open(root / "corpus.jsonl", "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
