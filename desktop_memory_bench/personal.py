"""A person's library: do short questions get their file, judged strong, and does nonsense stay weak?

    python -m desktop_memory_bench.personal [--split test|train|all] [--cache DIR] [--per-query] [--json]

The data is in ``data/personal/``: folders of notes (a car log, recipes, tax and travel notes, meeting notes, a
year of daily notes, ...; 5 to 240 files each) and ``questions.tsv``: 1-4 word questions with the one file that
answers each, and nonsense queries (random words, words no note holds, letter strings, words of different notes
run together) that must be judged weak. Each folder is its own library, indexed through the real pipeline with the
app's default settings and the local MiniLM model (cached in ``--cache``, keyed by the folder's bytes and the
model). Every question runs through ``MemoryService.context_outcome``, as ``desktop-memory context`` does.

Per folder and in total it reports: the right file first on the first screen (``outcome.files[0]``); first *and*
judged strong; the right file's passage in the prompt context (weak results are left out of it); nonsense
queries with no strong result (an empty context). The folders are split: garden, kitchen and work tuned the
strength rule (``--split train``); home, projects and journal were never looked at while tuning (``test``).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "personal"


@dataclass
class Question:
    split: str
    folder: str
    query: str
    answer: str | None  # the right file's name; None for a nonsense query


@dataclass
class FolderScore:
    folder: str
    files: int = 0
    questions: int = 0
    first: int = 0  # the right file is the first file shown
    first_strong: int = 0  # ... and judged strong
    in_context: int = 0  # the right file's passage is in the default prompt context
    nonsense: int = 0
    nonsense_weak: int = 0  # no strong result: the context is empty
    misses: list[str] = field(default_factory=list)


def load_questions(path: Path = DATA / "questions.tsv") -> list[Question]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        split, folder, query, answer = line.split("\t")
        if query == "-":  # nonsense: the query is in the last column
            out.append(Question(split, folder, answer, None))
        else:
            out.append(Question(split, folder, query, answer))
    return out


def folder_key(folder: Path, model_id: str) -> str:
    """A digest of every file's name and bytes, and the model: a changed note re-indexes its folder."""
    h = hashlib.sha256(model_id.encode())
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(str(f.relative_to(folder)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def open_library(folder: Path, cache: Path) -> Any:
    """A MemoryService on ``folder``'s library, indexed (and embedded) on first use and cached after."""
    from desktop_memory.config import Settings
    from desktop_memory.embed import make_embedder
    from desktop_memory.service import MemoryService

    settings = Settings()
    settings = dataclasses.replace(settings, embedder=dataclasses.replace(settings.embedder, threads=0))
    embedder = make_embedder(settings.embedder)
    cache.mkdir(parents=True, exist_ok=True)
    db = cache / f"personal-{folder.name}-{folder_key(folder, embedder.model_id)}.db"
    fresh = not db.exists()
    svc = MemoryService(settings, db_path=db, embedder=embedder)
    if fresh:
        summary = svc.index_paths([folder])
        if summary.embed_error:
            svc.close()
            db.unlink(missing_ok=True)
            raise SystemExit(f"embedding {folder} failed: {summary.embed_error}")
    return svc


def score_folder(folder: Path, questions: list[Question], cache: Path, per_query: bool) -> FolderScore:
    svc = open_library(folder, cache)
    score = FolderScore(folder.name, files=sum(1 for p in folder.rglob("*") if p.is_file()))
    try:
        for q in questions:
            report, outcome = svc.context_outcome(q.query)
            top = outcome.files[0] if outcome.files else None
            if q.answer is None:
                score.nonsense += 1
                score.nonsense_weak += outcome.weak and not report.items
                if not outcome.weak:
                    shown = Path(top.source).name if top else "-"
                    score.misses.append(f"nonsense judged strong: {q.query!r} -> {shown}")
            else:
                score.questions += 1
                right = top is not None and Path(top.source).name == q.answer
                score.first += right
                score.first_strong += right and top is not None and top.strength == "strong"
                packed = any(Path(item.source).name == q.answer for item in report.items)
                score.in_context += packed
                if not (right and top is not None and top.strength == "strong" and packed):
                    got = f"{Path(top.source).name} ({top.strength})" if top else "nothing"
                    score.misses.append(f"{q.query!r}: want {q.answer}, first {got}, in context: {packed}")
            if per_query and top is not None:
                print(f"  [{folder.name}] {q.query!r}: {Path(top.source).name} {top.strength} · {top.explain()}",
                      file=sys.stderr)
    finally:
        svc.close()
    return score


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.0f} %)" if d else "-"


def table(scores: list[FolderScore]) -> str:
    total = FolderScore("total", files=sum(s.files for s in scores))
    for s in scores:
        for f in ("questions", "first", "first_strong", "in_context", "nonsense", "nonsense_weak"):
            setattr(total, f, getattr(total, f) + getattr(s, f))
    head = "| library | files | questions | right file first | first and strong | in the context | nonsense weak |"
    rows = [head, "|" + "---|" * 7]
    for s in [*scores, total]:
        rows.append(f"| {s.folder} | {s.files} | {s.questions} | {_pct(s.first, s.questions)} | "
                    f"{_pct(s.first_strong, s.questions)} | {_pct(s.in_context, s.questions)} | "
                    f"{_pct(s.nonsense_weak, s.nonsense)} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m desktop_memory_bench.personal", description=__doc__.split("\n")[0])
    p.add_argument("--split", choices=("test", "train", "all"), default="test")
    p.add_argument("--cache", type=Path, default=None,
                   help="where the folders' indexes are kept (default: the app's data folder / bench-personal)")
    p.add_argument("--per-query", action="store_true", help="print every query's first file and why (stderr)")
    p.add_argument("--json", action="store_true", help="print the scores as JSON instead of a table")
    args = p.parse_args(argv)
    from desktop_memory.config import data_dir

    cache = args.cache or data_dir() / "bench-personal"
    questions = [q for q in load_questions() if args.split in ("all", q.split)]
    scores = []
    for name in dict.fromkeys(q.folder for q in questions):
        scores.append(score_folder(DATA / name, [q for q in questions if q.folder == name], cache, args.per_query))
    if args.json:
        print(json.dumps([dataclasses.asdict(s) for s in scores], indent=2))
    else:
        print(table(scores))
        for s in scores:
            for miss in s.misses:
                print(f"  {s.folder}: {miss}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
