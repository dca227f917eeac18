"""The UI-stall benchmark (`desktop-memory-gui --stall-bench`) drives the real window and reports per phase."""

from __future__ import annotations

import json
import os

from desktop_memory.config import ENV_CONFIG_DIR
from desktop_memory_bench import stall_bench

from .conftest import FASTAPI


def test_stall_bench_indexes_a_folder_and_attributes_every_tick(qtbot, capsys):
    before = os.environ.get(ENV_CONFIG_DIR)
    report = stall_bench.run_stall_bench(FASTAPI, embedder="hash", type_every_s=0.2, library_every_s=0.6,
                                         library_dwell_s=0.3, timeout_s=300, log=lambda _m: None)
    n_files = sum(1 for p in FASTAPI.rglob("*.md"))
    assert report.files == n_files
    assert report.chunks > n_files
    assert report.first_keyword_result_s is not None and report.first_keyword_result_s < report.job_s
    assert report.queries_typed >= 1 and report.library_switches >= 1
    phases = {p.phase: p for p in report.phases}
    assert set(phases) == {"reading files", "embedding", "Library shown", "tab switch", "whole run"}
    whole = phases["whole run"]
    # every tick belongs to exactly one phase, and the phases add up to the whole run
    assert whole.ticks == sum(p.ticks for name, p in phases.items() if name != "whole run") > 0
    assert whole.max_ms == max(p.max_ms for p in report.phases)
    assert phases["Library shown"].ticks + phases["tab switch"].ticks > 0
    assert os.environ.get(ENV_CONFIG_DIR) == before  # the benchmark's temporary folders are not left in place
    table = report.table()
    assert "| whole run |" in table and f"{n_files:,} files" in table


def test_stall_bench_command_prints_json(qtbot, capsys, tmp_path):
    (tmp_path / "notes").mkdir()
    for i in range(5):
        (tmp_path / "notes" / f"n{i}.md").write_text(f"# Note {i}\n\n## Part\n\nhow do I configure item {i}\n")
    assert stall_bench.main([str(tmp_path / "notes"), "--embedder", "hash", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["files"] == 5 and data["embedder"] == "hash"
    assert [p["phase"] for p in data["phases"]][-1] == "whole run"
    assert stall_bench.main([str(tmp_path / "missing")]) == 2


def test_gui_benchmarks_say_how_to_get_them_when_not_installed(monkeypatch, capsys):
    """The app never ships the benchmark package: without it, `--stall-bench` / `--soak-bench` explain, not crash."""
    import sys

    from desktop_memory.gui import app

    for name in ("desktop_memory_bench.stall_bench", "desktop_memory_bench.soak"):
        monkeypatch.setitem(sys.modules, name, None)  # as if the package were absent
    assert app.main(["--stall-bench", "somewhere"]) == 2
    assert app.main(["--soak-bench"]) == 2
    err = capsys.readouterr().err
    assert "--stall-bench is a developer benchmark" in err and "pip install -e '.[bench]'" in err
    assert "--soak-bench is a developer benchmark" in err
