"""Issue 32 items 5 and 9 on a real PostgreSQL + pgvector (tests/support/postgres.py): two machines writing one
library at once while a third searches lose nothing and fail nothing; two machines removing the same folder at
once leave one clear outcome, nothing half-written.

The first is the small version of ``python -m desktop_memory_bench.shared_writers``: the same three processes, each
with its own config folder (so its own machine id), real Markdown files."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.service import MemoryService
from desktop_memory_bench import shared_writers
from tests.conftest import MDDOCS
from tests.support.postgres import pg_server, pg_url  # noqa: F401


def test_two_machines_write_while_a_third_searches_no_error_no_lost_document(pg_url, tmp_path):  # noqa: F811
    report = shared_writers.run(pg_url, MDDOCS / "fastapi", 40, keep=tmp_path)
    assert shared_writers.errors_of(report) == []
    for name in shared_writers.WRITERS:
        writer, found = report["together"]["writers"][name], report["verify"]["machines"][name]
        assert writer["indexed"] == 20 and writer["passages"] > 30
        assert (found["expected"], found["found"], found["owner"]) == (20, 20, name)
    # the embedding queue is the library's: one writer may embed the other's passages too, leaving it none to embed
    assert sum(report["together"]["writers"][n]["vectors"] for n in shared_writers.WRITERS) > 0
    reader = report["together"]["reader"]
    assert reader["error_count"] == 0 and reader["searches"] > 0
    check = report["verify"]
    assert check["stats_documents"] == {"indexed": 40} and check["pending_vectors"] == 0
    # every passage has its vector (a duplicate shares its twin's), whichever machine embedded it: waiting passages
    # are the library's, not a folder's
    total = sum(report["together"]["writers"][n]["passages"] for n in shared_writers.WRITERS)
    assert check["passages"] == total and check["vectors"] == total - check["duplicates"]
    table = shared_writers.render(report)
    assert "desktop" in table and "laptop" in table and "p95 ms" in table


N = 250  # documents in the folder both remove: three slices of library_writes.REMOVE_SLICE


def _machine(monkeypatch: pytest.MonkeyPatch, base: Path, name: str, url: str) -> MemoryService:
    monkeypatch.setenv("DESKTOP_MEMORY_CONFIG_DIR", str(base / f"config-{name}"))
    return MemoryService(Settings(machine_name=name), db_path=url, embedder=HashEmbedder(32))


def test_two_machines_removing_the_same_folder_at_once_leave_one_clear_outcome(pg_url, tmp_path,  # noqa: F811
                                                                               monkeypatch):
    folder = tmp_path / "desk" / "notes"
    folder.mkdir(parents=True)
    for i in range(N):
        (folder / f"note-{i:03d}.md").write_text(f"# Note {i}\n\nThe harbour bridge log, entry {i}.\n")
    other = tmp_path / "lap" / "notes"
    other.mkdir(parents=True)
    (other / "keep.md").write_text("# Kept\n\nTomatoes need sun.\n")
    desk = _machine(monkeypatch, tmp_path, "desktop", pg_url)
    lap = _machine(monkeypatch, tmp_path, "laptop", pg_url)
    try:
        assert desk.index_paths([folder]).indexed == N
        assert lap.index_paths([other]).indexed == 1
        start = threading.Barrier(2)
        outcomes: dict[str, object] = {}

        def remove(name: str, svc: MemoryService) -> None:
            start.wait()
            try:
                outcomes[name] = svc.remove_paths([str(folder)])
            except Exception as exc:  # the outcome under test: recorded, asserted below
                outcomes[name] = exc

        threads = [threading.Thread(target=remove, args=(n, s)) for n, s in (("desktop", desk), ("laptop", lap))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        # one clear outcome: no error on either machine, every document removed once between them (they may take
        # turns slice by slice: each slice is one transaction under the library's writer lock)
        assert all(isinstance(v, int) for v in outcomes.values()), outcomes
        assert sum(outcomes.values()) == N, outcomes  # type: ignore[arg-type]
        # nothing half-written: no document, passage or intent left behind, the other folder whole
        for svc in (desk, lap):
            assert svc.indexed_under(str(folder)) == {}
            assert svc.pending_removals() == [] and svc.check() == []
            assert svc.library_folders() == [str(other)]
            assert not svc.search_outcome("harbour bridge log", backend="keyword").results
            assert svc.search_outcome("tomatoes sun", backend="keyword").results[0].source == str(other / "keep.md")
        assert desk.roots() == [] and lap.roots() == [str(other)]
        assert desk.stats().documents == {"indexed": 1}
    finally:
        desk.close()
        lap.close()
