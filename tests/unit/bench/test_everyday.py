"""The everyday-operations benchmark (desktop_memory_bench/everyday.py) end to end on a small library: a real
watched folder, synthetic passages through the store's write path, the real window in a fresh Qt process, and the
service's own stats / listing / watch catch-up / remove / check / compact."""

from __future__ import annotations

import json
from pathlib import Path

from desktop_memory_bench.everyday import main
from tests.support.beir import make_beir


def test_everyday_operations_small(tmp_path: Path, capsys):
    beir = make_beir(tmp_path / "tinybeir")
    out = tmp_path / "everyday.json"
    assert main([str(beir), "--embedder", "hash", "--db", str(tmp_path / "base.db"), "--sizes", "1000",
                 "--watch-files", "30", "--folder-docs", "20", "--work", str(tmp_path / "work"),
                 "--out", str(out)]) == 0
    table = capsys.readouterr().out
    assert "| `compact` (s) |" in table and "1,000 passages" in table
    report = json.loads(out.read_text())
    assert report["watched_indexed"] == 30
    step = report["steps"][0]
    assert step["chunks"] == step["vectors"] == 1000  # the watched notes got vectors too: nothing left pending
    assert step["documents"] == 30 + (1000 - 30) // 10  # 30 notes + 97 synthetic documents of 10 passages
    win = step["window"]
    assert win["shown_s"] <= win["open_s"] and win["library_s"] > 0 and win["library_rows"] > 0, win
    assert win["folder_s"] >= win["library_s"] and win["library_top_rows"] > 0, win  # a folder opened: its files
    assert step["listing_s"] > 0 and step["page_s"] > 0
    assert step["watch_catch_up_s"] is not None  # the watcher's first catch-up finished (nothing to re-index)
    # one whole synthetic folder: 20 documents of 10 passages
    assert (step["removed_documents"], step["removed_passages"]) == (20, 200)
    assert step["check_problems"] == 0
    before, after = step["compact_mb"]
    assert 0 < after <= before
