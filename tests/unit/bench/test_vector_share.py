"""The partial-vector benchmark (desktop_memory_bench.vector_share) on a tiny BEIR folder with the hash embedder."""

from __future__ import annotations

import json

from desktop_memory.store import Store
from desktop_memory_bench import vector_share

DOCS = {f"d{i}": (f"Topic {i}", f"Passage {i} about {word} and more {word}.")
        for i, word in enumerate(["cats", "dogs", "plants", "rust", "cells", "lava"])}
QUERIES = {"q1": "cats", "q2": "plants and sunlight", "q3": "lava"}


def make_beir(folder):
    folder.mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": t, "text": x}) + "\n"
                                                 for d, (t, x) in DOCS.items()))
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n"
                                                  for q, t in QUERIES.items()))
    (folder / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td0\t1\nq2\td2\t1\nq3\td5\t1\n")
    return folder


def test_shares_keep_exactly_their_vectors_and_full_runs_compare_equal(tmp_path, capsys):
    beir = make_beir(tmp_path / "tiny")
    db, work = tmp_path / "full.db", tmp_path / "work"
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    args = [str(beir), "--split", "test", "--embedder", "hash", "--db", str(db), "--work", str(work)]
    assert vector_share.main([*args, "--shares", "0.5,1", "--rankings", str(first), "--out",
                              str(tmp_path / "f.json")]) == 0
    table = capsys.readouterr().out
    assert "50 %" in table and "100 %" in table
    figures = json.loads((tmp_path / "f.json").read_text())
    assert figures["50 %"]["vectors"] == 3 and figures["100 %"]["vectors"] == 6
    half = Store(figures["50 %"]["db"], readonly=True)
    try:
        assert half.counts()["vectors"] == 3 and half.pending_count() == 3
    finally:
        half.conn.close()
    assert vector_share.main([*args, "--shares", "1", "--rankings", str(second)]) == 0
    capsys.readouterr()
    # the same code twice: every query's fused list is identical; a share missing from one file differs
    assert vector_share.main(["--compare", str(first), str(second)]) == 1
    assert "50 % deep" in capsys.readouterr().out
    only_full = json.loads(first.read_text())
    del only_full["50 %"]
    first.write_text(json.dumps(only_full))
    assert vector_share.main(["--compare", str(first), str(second)]) == 0


def test_compare_tells_strong_first_reordering_from_a_change():
    before = [[1, 0.03, "weak"], [2, 0.02, "strong"], [3, 0.01, "weak"]]
    assert vector_share._verdict(before, before) == "same"
    # strong #4 from deeper in the fused list came in first, weak #3 was pushed out: same scores, other order
    assert vector_share._verdict(before, [[2, 0.02, "strong"], [4, 0.005, "strong"], [1, 0.03, "weak"]]) == "reordered"
    assert vector_share._verdict(before, [[2, 0.02, "strong"], [1, 0.031, "weak"], [3, 0.01, "weak"]]) == "changed"
    assert vector_share._verdict(before, [[2, 0.02, "strong"], [1, 0.03, "strong"], [3, 0.01, "weak"]]) == "changed"
    assert vector_share._verdict(before, [[2, 0.02, "strong"], [1, 0.03, "weak"], [5, 0.001, "weak"]]) == "changed"
    assert vector_share._verdict(before, []) == "changed"


def test_embedded_subset_keeps_the_fully_embedded_documents(tmp_path, capsys):
    from desktop_memory_bench.embedded_subset import make_subset

    beir = make_beir(tmp_path / "tiny")
    db = tmp_path / "full.db"
    assert vector_share.main([str(beir), "--split", "test", "--embedder", "hash", "--db", str(db), "--work",
                              str(tmp_path / "w"), "--shares", "0.5", "--sample", "first",
                              "--out", str(tmp_path / "f.json")]) == 0
    half = json.loads((tmp_path / "f.json").read_text())["50 %"]["db"]
    figures = make_subset(tmp_path / "w" / half.rsplit("/", 1)[-1], beir, tmp_path / "sub.db", tmp_path / "sub")
    assert figures["documents"] == 3 and figures["dropped"] == 3 and figures["passages"] == figures["vectors"] == 3
    kept = {json.loads(line)["_id"] for line in (tmp_path / "sub" / "corpus.jsonl").read_text().splitlines()}
    assert kept == {"d0", "d1", "d2"}  # the first half in reading order
    assert (tmp_path / "sub" / "qrels.tsv").read_text().splitlines()[1:] == ["q1\td0\t1", "q2\td2\t1"]
    capsys.readouterr()
    assert vector_share.main([str(tmp_path / "sub"), "--split", "test", "--embedder", "hash", "--snapshot",
                              "--db", str(tmp_path / "sub.db"), "--shares", "1"]) == 0
    assert "100 %" in capsys.readouterr().out
