"""End to end through the real CLI: real files, real SQLite + sqlite-vec, the real local ONNX model."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from desktop_memory.context import estimate_tokens

QUESTIONS = {
    "how do I make a query parameter optional": "tutorial/query-params.md",
    "declare a request body with a pydantic model": "tutorial/body.md",
    "return a 404 error when an item is not found": "tutorial/handling-errors.md",
    "upload files from a form": "tutorial/request-files.md",
    "run code before the app starts, like loading a model": "advanced/events.md",
    "tracing JIT compiler for dynamic languages": "tracemonkey.pdf",
}


def cli(db, *args, check=True):
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    proc = subprocess.run([sys.executable, "-m", "desktop_memory.cli", "--db", str(db), *args],
                          capture_output=True, text=True, env=env, timeout=900, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}\nstdout:{proc.stdout}\nstderr:{proc.stderr}")
    return proc


@pytest.fixture(scope="module")
def library(tmp_path_factory, eval_dir):
    root = tmp_path_factory.mktemp("lib")
    shutil.copytree(eval_dir / "mddocs" / "fastapi" / "tutorial", root / "tutorial")
    shutil.copytree(eval_dir / "mddocs" / "fastapi" / "advanced", root / "advanced")
    for name in ("tracemonkey.pdf", "crazyones.pdf", "encrypted-file.pdf", "poppler-742-0-fuzzed.pdf"):
        shutil.copy(eval_dir / "pdfs" / name, root / name)
    db = root.parent / "e2e.db"
    first = cli(db, "index", str(root), "--json")
    return root, db, json.loads(first.stdout)


def test_index_summary_and_reasons(library):
    _, db, summary = library
    by_name = {os.path.basename(o["path"]): o for o in summary["outcomes"]}
    assert by_name["tracemonkey.pdf"]["status"] == "indexed"
    encrypted, fuzzed = by_name["encrypted-file.pdf"], by_name["poppler-742-0-fuzzed.pdf"]
    assert encrypted["status"] == "skipped" and "password" in encrypted["reason"]
    assert fuzzed["status"] == "failed" and "corrupt" in fuzzed["reason"]
    assert summary["chunks_embedded"] == summary["chunks_added"] > 100
    stats = json.loads(cli(db, "stats", "--json").stdout)
    assert stats["pending_vectors"] == 0 and stats["vectors"] > 100
    assert stats["documents"]["indexed"] >= 80 and stats["model_id"] == "all-MiniLM-L6-v2-int8" and stats["dim"] == 384


def test_second_run_embeds_nothing(library):
    root, db, _ = library
    again = json.loads(cli(db, "index", str(root), "--json").stdout)
    assert again["indexed"] == 0 and again["chunks_embedded"] == 0 and again["unchanged"] > 80


@pytest.mark.parametrize("question,expected", sorted(QUESTIONS.items()))
def test_natural_questions_find_the_file_in_top5(library, question, expected):
    _, db, _ = library
    results = json.loads(cli(db, "search", question, "--top-k", "5", "--json").stdout)
    assert results, question
    assert any(r["source"].endswith(expected) for r in results), [r["source"] for r in results]
    top = results[0]
    assert {"rank", "score", "source", "text", "location", "lanes"} <= set(top)
    assert os.path.isabs(top["source"]) and top["rank"] == 1
    for lane in top["lanes"].values():
        assert {"rank", "score"} <= set(lane)


def test_pdf_results_carry_pages(library):
    _, db, _ = library
    results = json.loads(cli(db, "search", "trace trees loop", "--kind", "pdf", "--json").stdout)
    assert results and all(r["source"].endswith(".pdf") for r in results)
    assert all(isinstance(r["location"]["page"], int) and r["location"]["page"] >= 1 for r in results)


def test_context_stays_under_budget_and_cites_sources(library):
    _, db, _ = library
    out = json.loads(cli(db, "context", "how do I make a query parameter optional", "--budget", "600", "--json").stdout)
    assert out["budget"] == 600 and 0 < out["tokens_used"] <= 600
    assert estimate_tokens(out["text"]) == out["tokens_used"]
    # sources are named relative to the indexed folder by default (no /home/<user>/… in a chat); items keep the path
    assert out["text"].startswith("[Source: ") and not out["text"].startswith("[Source: /") and out["items"]
    assert all(item["source"].startswith("/") for item in out["items"])
    assert out["text"].count("[Source: ") == len(out["items"])
    plain = cli(db, "context", "how do I make a query parameter optional", "--budget", "600")
    assert plain.stdout.rstrip("\n") == out["text"]


def test_hostile_query_through_cli(library):
    _, db, _ = library
    for q in ['"unbalanced', "NEAR(a b", "text:* OR -", "'; DROP TABLE chunks; --", ""]:
        proc = cli(db, "search", q, "--json", check=False)
        assert proc.returncode == 0, proc.stderr
        assert isinstance(json.loads(proc.stdout), list)


def test_remove_and_check(library):
    root, db, _ = library
    assert "removed 1" in cli(db, "remove", str(root / "crazyones.pdf")).stdout
    assert cli(db, "check").stdout.strip().endswith("ok")


def test_newer_database_is_refused_with_a_clear_message(tmp_path):
    import apsw

    db = tmp_path / "future.db"
    (tmp_path / "empty").mkdir()
    cli(db, "index", str(tmp_path / "empty"))  # a library (stats on a missing one makes none: "no library at …")
    c = apsw.Connection(str(db))
    c.execute("pragma user_version=999")
    c.close()
    proc = cli(db, "stats", check=False)
    assert proc.returncode == 1 and "newer desktop-memory" in proc.stderr and "Traceback" not in proc.stderr
