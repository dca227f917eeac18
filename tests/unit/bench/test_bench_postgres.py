"""`desktop-memory bench … --postgres URL` (issue 32 item 9): one run prints both stores' tables, the SQLite library
copied into a real PostgreSQL + pgvector (tests/support/postgres.py) without re-embedding; a bad URL is said in
one sentence with exit code 1 before any indexing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop_memory.cli import main
from tests.support.beir import make_beir
from tests.support.postgres import pg_server, pg_url  # noqa: F401


@pytest.fixture()
def beir(tmp_path) -> Path:
    return make_beir(tmp_path / "tinybeir")


def _bench(beir: Path, db: Path, *extra: str) -> list[str]:
    return ["bench", str(beir), "--embedder", "hash", "--db", str(db), "--no-baseline", "--nonsense", "0", *extra]


def test_one_run_prints_both_stores_and_reuses_the_copy(beir, tmp_path, capsys, pg_url):  # noqa: F811
    db = tmp_path / "base.db"
    assert main(_bench(beir, db, "--backends", "hybrid,keyword", "--postgres", pg_url)) == 0
    out = capsys.readouterr().out
    assert "SQLite beside PostgreSQL" in out
    rows = [line for line in out.splitlines() if line.lstrip("| ").startswith(("SQLite", "PostgreSQL"))]
    assert {(r.split()[0].strip("|"), r.split()[1].strip("|")) for r in rows} >= {
        ("SQLite", "hybrid"), ("PostgreSQL", "hybrid"), ("SQLite", "keyword"), ("PostgreSQL", "keyword")}
    assert "passages copied" in out
    assert main(_bench(beir, db, "--backends", "hybrid,dense", "--postgres", pg_url, "--json")) == 0
    report = json.loads(capsys.readouterr().out)
    side = report["postgres"]
    assert side["copy"]["reused"] is True  # the database already holds this library
    for backend in ("hybrid", "dense"):
        assert side["backends"][backend]["queries"] == report["backends"][backend]["queries"] > 0
    # the same vectors, exact search on both (a tiny library): the dense lane ranks alike
    assert side["backends"]["dense"]["ndcg@10"] == pytest.approx(report["backends"]["dense"]["ndcg@10"], abs=1e-6)


@pytest.mark.parametrize("url, said", [
    ("mysql://me@host/db", "--postgres needs a postgresql:// URL"),
    ("/tmp/library.db", "--postgres needs a postgresql:// URL"),
])
def test_a_url_that_is_no_postgresql_url_is_one_sentence(beir, tmp_path, capsys, url, said):
    db = tmp_path / "base.db"
    assert main(_bench(beir, db, "--postgres", url)) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and said in err[0]
    assert not db.exists()  # said before any indexing


def test_a_database_the_server_does_not_have_is_one_sentence(beir, tmp_path, capsys, pg_server):  # noqa: F811
    url = str(pg_server.get_uri()).replace("/postgres?", "/no_such_library?")
    db = tmp_path / "base.db"
    assert main(_bench(beir, db, "--postgres", url)) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "no_such_library" in err[0]
    assert "Traceback" not in err[0] and not db.exists()


def test_scale_steps_on_both_stores(beir, tmp_path, capsys, pg_url):  # noqa: F811
    db = tmp_path / "base.db"
    assert main(_bench(beir, db, "--scale", "300,600", "--scale-queries", "3", "--no-app-probe",
                       "--postgres", pg_url, "--json")) == 0
    report = json.loads(capsys.readouterr().out)
    for step in report["steps"]:
        pg = step["postgres"]
        assert pg["chunks"] == step["chunks"] and step["app"] is None
        assert pg["dense_recall@10"] == pytest.approx(1.0)  # exact below the HNSW threshold
        for backend in ("hybrid", "keyword", "dense"):
            assert pg["latency"][backend]["p50_ms"] > 0
    assert report["steps"][1]["postgres"]["copy"]["passages"] == 300  # only what the step added
    assert all(step["postgres"]["copy"]["rows_per_s"] > step["postgres"]["copy"]["passages_per_s"] > 0
               for step in report["steps"])  # the rows by COPY, apart from the whole copy
    from desktop_memory_bench.table import format_scale

    pg_table = format_scale(report).split("the same library on PostgreSQL")[1].splitlines()
    header = pg_table[1]
    assert "rows/s" in header and len(pg_table[3].split()) == 13  # a value under each of the 13 columns


def test_the_insertion_bench_times_a_whole_copy_and_a_prefix(tmp_path, capsys, pg_server):  # noqa: F811
    """`python -m desktop_memory_bench.pg_insert LIBRARY URL… [--passages N]`: one table row per database; with
    ``--passages`` the copy stops after the slice that reaches N (every written passage with its vector)."""
    from desktop_memory_bench import pg_insert
    from tests.support.postgres import fresh_database
    from tests.unit.test_library_copy import _state

    src = tmp_path / "memory.db"
    notes = tmp_path / "notes"
    notes.mkdir()
    for i in range(250):  # two slices of the copy
        (notes / f"n{i:02}.md").write_text(f"# Note {i}\n\nA tern called {i} flew over harbour {i * 7}.\n",
                                           encoding="utf-8")
    from desktop_memory.config import Settings
    from desktop_memory.embed.hashing import HashEmbedder
    from desktop_memory.service import MemoryService

    svc = MemoryService(Settings(), db_path=src, embedder=HashEmbedder(32))
    try:
        svc.index_paths([notes])
    finally:
        svc.close()
    whole, prefix = fresh_database(pg_server), fresh_database(pg_server)
    assert pg_insert.main([str(src), whole]) == 0
    row = capsys.readouterr().out.splitlines()[-1].split("|")
    assert row[2].strip() == "250"  # passages
    assert _state(whole)["vectors"] == 250 and _state(whole)["pending"] == 0
    first = pg_insert.timed_copy(src, prefix, passages=1)
    assert first["passages"] == first["vectors"] and 0 < first["passages"] < 250  # one slice
