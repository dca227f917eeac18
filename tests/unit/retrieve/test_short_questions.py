"""Issue 30 item 1: a short question in a small notes folder gets its answer, judged strong, into the context.

A real notes folder (a car log, a sourdough recipe, tax, travel, health and home-repair notes, a PDF) indexed with
the real local MiniLM model through the real service. On the old rule (calibrated on SciFact's long claims) every
one of these answers was #1 in both lanes and still judged weak, so `context` packed nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_memory.config import Settings
from desktop_memory.models import STRONG
from desktop_memory.service import MemoryService

pytestmark = pytest.mark.slow
NOTES = Path(__file__).resolve().parents[2] / "data" / "notes_small"
REPO = Path(__file__).resolve().parents[3]
NONSENSE = ["purple elephant galaxy", "xqzv blorft", "tyre sourdough ferry", "zeppelin", "quantum banana"]


@pytest.fixture(scope="module")
def notes(tmp_path_factory):
    root = tmp_path_factory.mktemp("person") / "notes"
    shutil.copytree(NOTES, root)
    db = root.parent / "memory.db"
    svc = MemoryService(Settings(), db_path=db)  # the app's defaults: the bundled MiniLM model
    summary = svc.index_paths([root])
    assert summary.indexed == len(list(NOTES.iterdir())) and not summary.embed_error, summary
    yield svc, root, db
    svc.close()


@pytest.mark.parametrize(("question", "answer"), [
    ("tyre pressure", "car.txt"), ("bread", "sourdough.md"), ("ferry", "travel-skye.md"),
    ("claude desktop", "claude-desktop-setup.md"), ("penicillin", "dentist.txt"), ("gift aid", "tax-2024-25.md"),
    # the car log's words are in two passages ("Car log" in the first, "Next service due" in the second)
    ("when is the next car service due", "car.txt"),
])
def test_a_short_question_gets_its_file_strong_and_in_the_context(notes, question, answer):
    svc, _root, _db = notes
    report, out = svc.context_outcome(question)
    top = out.files[0]
    assert Path(top.source).name == answer and top.strength == STRONG, [(r.source, r.strength, r.explain())
                                                                         for r in out.files]
    assert not out.weak
    assert any(Path(i.source).name == answer for i in report.items), report.text
    assert top.strength_reason and top.strength_reason in top.explain()  # says why


def test_the_reason_says_when_every_word_is_found_only_here(notes):
    svc, _root, _db = notes
    top = svc.search_outcome("midges").files[0]
    assert Path(top.source).name == "travel-skye.md"
    assert top.strength_reason == "the question's word is found only here"
    top = svc.search_outcome("custard tarts").files[0]
    assert top.strength_reason == "every word of the question is found only here", top.explain()


@pytest.mark.parametrize("query", NONSENSE)
def test_nonsense_is_weak_and_packs_nothing(notes, query):
    svc, _root, _db = notes
    report, out = svc.context_outcome(query)
    assert out.weak and all(r.strength != STRONG for r in out.results), [(r.source, r.explain())
                                                                           for r in out.results]
    assert report.items == []


def test_same_index_same_ranked_list(notes):
    svc, _root, _db = notes
    runs = [[(r.chunk_id, r.strength, r.strength_reason) for r in svc.search_outcome(q).results]
            for q in ("tyre pressure", "bread", "purple elephant galaxy") for _ in range(2)]
    assert runs[0] == runs[1] and runs[2] == runs[3] and runs[4] == runs[5]


def _cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "desktop_memory.cli", "--db", str(db), *args],
                          check=False, capture_output=True, text=True, timeout=300, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


def test_cli_context_and_search_show_it(notes):
    svc, _root, db = notes
    svc.close()  # the CLI opens the library itself
    ctx = _cli(db, "context", "tyre pressure")
    assert ctx.returncode == 0, ctx.stderr
    assert "car.txt" in ctx.stdout and "Tyre pressure: 2.3 bar" in ctx.stdout
    found = _cli(db, "search", "tyre pressure")
    assert found.returncode == 0, found.stderr
    first = found.stdout.splitlines()[:2]
    assert "/car.txt" in first[0] and first[1].strip().startswith("strong match · score"), first
    none = _cli(db, "context", "purple elephant galaxy")
    assert none.returncode == 0 and "[Source:" not in none.stdout
    assert "no strong matches; nothing packed" in none.stderr
    weak = _cli(db, "search", "purple elephant galaxy")
    assert "    weak match · score" in weak.stdout
