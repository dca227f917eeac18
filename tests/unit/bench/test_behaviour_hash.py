"""The behaviour hash (desktop_memory_bench/behaviour_hash.py) on a tiny BEIR folder with the hash embedder: two
builds of the same corpus hash the same, a changed passage changes the hash of exactly the tables it lives in, and
nothing a second run changes by itself (paths of the temporary folder, clock readings, row ids) is hashed."""

from __future__ import annotations

import json
import re
from pathlib import Path

from desktop_memory_bench.behaviour_hash import main
from tests.support.beir import make_beir

ROW = re.compile(r"^(.+?)\s+(\d+)\s+([0-9a-f]{64})$")


def _table(out: str) -> dict[str, tuple[str, str]]:
    """{table: (rows, sha256)} from the printed report (the lines after it are the comparison's notes)."""
    return {m.group(1): (m.group(2), m.group(3)) for m in map(ROW.match, out.splitlines()) if m}


def test_two_builds_hash_the_same_and_a_changed_passage_shows_where(tmp_path: Path, capsys) -> None:
    beir = make_beir(tmp_path / "tiny")
    saved = tmp_path / "saved"
    assert main(["scifact", "--data", str(beir), "--save", str(saved)]) == 0
    first = _table(capsys.readouterr().out)
    assert first["documents"][0] == "6" and first["chunks"][0] == first["chunk_vectors"][0]
    assert set(first) >= {"ALL ROWS", "ALL RANKINGS", "rankings hybrid", "chunks_fts (fts5vocab)"}

    assert main(["scifact", "--data", str(beir), "--against", str(saved)]) == 0  # a new build, a new temp folder
    out = capsys.readouterr().out
    assert _table(out) == first and f"identical to {saved}" in out

    corpus = beir / "corpus.jsonl"
    corpus.write_text(corpus.read_text(encoding="utf-8").replace("purr and hunt mice", "purr and chase mice"),
                      encoding="utf-8")
    assert main(["scifact", "--data", str(beir), "--against", str(saved)]) == 1
    out = capsys.readouterr().out
    now = _table(out)
    differ = {name for name in first if now[name] != first[name]}
    assert {"chunks", "chunk_vectors", "chunk_vector_bits", "documents", "chunks_fts (fts5vocab)",
            "ALL ROWS"} <= differ
    assert not differ & {"roots", "vector_models", "meta", "exclusions"}
    assert f"chunks: {first['chunks'][0]} -> {first['chunks'][0]} rows, 1 only before, 1 only now" in out
    assert "chunk_vectors: " in out and "1 vectors changed, largest |difference|" in out


def test_saved_rows_name_documents_and_passages_without_ids_clock_or_temporary_folder(tmp_path: Path, capsys) -> None:
    beir = make_beir(tmp_path / "tiny")
    saved = tmp_path / "saved"
    assert main(["scifact", "--data", str(beir), "--save", str(saved)]) == 0
    capsys.readouterr()
    docs = [json.loads(line) for line in (saved / "documents.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(d["path"] for d in docs) == sorted(["d1.md", "d2.md", "d3.md", "d=2F4.md", "d=205.md", "d6.md"])
    assert all("id" not in d and "mtime" not in d and "indexed_at" not in d for d in docs)
    chunk = json.loads((saved / "chunks.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert "id" not in chunk and isinstance(chunk["doc_id"], str) and chunk["doc_id"].endswith(".md")
    vector = json.loads((saved / "chunk_vectors.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert vector["id"][0].endswith(".md") and isinstance(vector["id"][1], int)
    meta = (saved / "meta.jsonl").read_text(encoding="utf-8")
    assert "model_id" in meta and "vec_seq" not in meta and "content_version" not in meta
    # a SQLite library records no machine on its folders ('' = whichever machine opens it: issue 32)
    roots = (saved / "roots.jsonl").read_text(encoding="utf-8")
    assert roots == '{"machine_id": "", "machine_name": "", "path": "."}\n'
    ranked = json.loads((saved / "rankings.json").read_text(encoding="utf-8"))
    assert set(ranked) == {"hybrid", "keyword", "bm25", "dense"}
    assert ranked["keyword"]["q1"][0][:2] == ["d1.md", 0]
