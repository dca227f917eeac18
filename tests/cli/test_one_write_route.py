"""Every write takes the scheduler's route (issue 31 item 1): a one-shot caller's write is a job on the writer lane,
so a removal a kill interrupted is finished by whichever caller writes next (not only by a window or `watch`), MCP's
index_path reads on that lane, and the CLI's one-shot commands still work beside a window's scheduler."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from desktop_memory.config import EmbedderSettings, Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.errors import StoreError
from desktop_memory.library_writes import LibraryWrites
from desktop_memory.mcp_server.library import Library
from desktop_memory.mcp_server.tools import index_path
from desktop_memory.service import MemoryService
from desktop_memory.store import Store
from tests.robustness.conftest import run_cli, write_settings
from tests.support.paced import PacedEmbedder, wait_for, write_folder


def _interrupted_removal(db: Path, keep: Path, gone: Path) -> None:
    """A library whose removal of ``gone`` was recorded and then killed before its first slice."""
    svc = MemoryService(Settings(), db_path=db, embedder=HashEmbedder(64))
    try:
        svc.index_paths([keep, gone], embed=False)
        stop = threading.Event()
        stop.set()
        assert svc.remove_paths([gone], cancel=stop) == 0
        assert svc.pending_removals() == [str(gone)]
    finally:
        svc.close()


@pytest.mark.parametrize("write", ["index", "drop_model_vectors", "compact"])
def test_a_removal_killed_midway_is_finished_by_the_next_one_shot_write(tmp_path: Path, write: str) -> None:
    keep, gone = write_folder(tmp_path / "keep", files=3), write_folder(tmp_path / "gone", files=5)
    db = tmp_path / "db" / "memory.db"
    _interrupted_removal(db, keep, gone)
    svc = MemoryService(Settings(), db_path=db, embedder=HashEmbedder(64))  # a benchmark, smoke, `models drop`
    try:
        if write == "index":
            svc.index_paths([keep], embed=False)
        elif write == "drop_model_vectors":  # refused (no such vectors), yet the removal is finished first
            with pytest.raises(StoreError, match="holds no vectors"):
                svc.drop_model_vectors("nothing-kept")
        else:
            svc.compact()
        assert svc.pending_removals() == [] and not svc.indexed_under(str(gone))
        assert len(svc.indexed_under(str(keep))) == 3
    finally:
        svc.close()


def test_mcp_index_path_reads_on_the_schedulers_writer_lane(tmp_path: Path, monkeypatch) -> None:
    folder = write_folder(tmp_path / "notes", files=2)
    db = tmp_path / "memory.db"
    svc = MemoryService(Settings(), db_path=db, embedder=HashEmbedder(64))
    svc.index_paths([folder], embed=False)
    svc.close()
    threads: list[str] = []
    real = LibraryWrites.index_paths

    def recorded(self: LibraryWrites, *args, **kwargs):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread().name)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(LibraryWrites, "index_paths", recorded)
    (folder / "late.md").write_text("# Late\n\nA note about quokkas written after the first read.\n",
                                    encoding="utf-8")
    lib = Library(Settings(embedder=EmbedderSettings(kind="hash")), db_path=db)
    try:
        text, out = lib.call(lambda s: index_path(lib, s, str(folder)))
        assert out.indexed == 1 and out.passages_embedded >= 1, text
        assert threads == ["desktop-memory-writer"]
        assert lib.call(lambda s: s.search_outcome("quokkas", backend="keyword").results)
    finally:
        lib.close()


def test_cli_index_and_remove_run_beside_a_window_whose_scheduler_is_embedding(tmp_path: Path) -> None:
    config = write_settings(tmp_path / "config", embedder={"kind": "hash"})
    db = tmp_path / "lib.db"
    mine = write_folder(tmp_path / "window", files=40)
    theirs = write_folder(tmp_path / "cli", files=3, word="quagga")  # (no passage shared with the window's)
    window = MemoryService(Settings(), db_path=db, embedder=PacedEmbedder())
    try:
        window.scheduler.read([str(mine)]).wait(60)
        wait_for(lambda: window.scheduler.embedding is not None, what="the window embedding")
        added = run_cli(db, "index", theirs, "--no-embed", config=config)
        assert added.returncode == 0, added.stderr
        assert "Traceback" not in added.stderr
        assert len(window.indexed_under(str(theirs))) == 3
        removed = run_cli(db, "remove", theirs, config=config)
        assert removed.returncode == 0, removed.stderr
        assert "removed 3 document(s) from the index" in removed.stdout
        assert not window.indexed_under(str(theirs))
        assert window.scheduler.wait_idle(120) and window.stats().pending_vectors == 0  # the window's went on
    finally:
        window.close()


@pytest.mark.parametrize("wrote_before", [False, True])
def test_a_write_after_close_says_the_library_is_closed(tmp_path: Path, wrote_before: bool) -> None:
    folder = write_folder(tmp_path / "notes", files=1)
    svc = MemoryService(Settings(), db_path=tmp_path / "m.db", embedder=HashEmbedder(64))
    if wrote_before:  # its scheduler is stopped by the close, not merely absent
        svc.index_paths([folder], embed=False)
    svc.close()
    with pytest.raises(StoreError, match="The library is closed"):
        svc.index_paths([folder])
    with pytest.raises(StoreError, match="The library is closed"):
        svc.compact()


def test_a_cli_command_outside_the_finish_first_list_finishes_a_killed_removal_too(tmp_path: Path) -> None:
    """`embedder --drop` was not one of the commands that finished a killed removal first: every write now is."""
    config = write_settings(tmp_path / "config", embedder={"kind": "hash"})
    keep, gone = write_folder(tmp_path / "keep", files=2), write_folder(tmp_path / "gone", files=4)
    db = tmp_path / "lib.db"
    _interrupted_removal(db, keep, gone)
    out = run_cli(db, "embedder", "--drop", "no-such-model", config=config)
    assert out.returncode == 1 and "holds no vectors of no-such-model" in out.stderr, out.stderr
    svc = MemoryService(Settings(), db_path=db, embedder=HashEmbedder(64))
    try:
        assert svc.pending_removals() == [] and not svc.indexed_under(str(gone))
    finally:
        svc.close()


def test_check_full_is_a_job_on_the_writer_lane_after_a_killed_removal(tmp_path: Path, monkeypatch) -> None:
    """`check --full` needs the writer (FTS5's self-check is a write statement): it is a job like every write, so
    it no longer takes the writer on the caller's thread, and a removal a kill interrupted is finished before it."""
    keep, gone = write_folder(tmp_path / "keep", files=3), write_folder(tmp_path / "gone", files=5)
    db = tmp_path / "db" / "memory.db"
    _interrupted_removal(db, keep, gone)
    checked: list[tuple[str, bool]] = []
    real = Store.check_integrity

    def recorded(self: Store, *args, **kwargs):  # type: ignore[no-untyped-def]
        checked.append((threading.current_thread().name, bool(kwargs.get("full"))))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Store, "check_integrity", recorded)
    svc = MemoryService(Settings(), db_path=db, embedder=HashEmbedder(64))
    try:
        steps: list[str] = []
        assert svc.check(progress=lambda step, _done, _steps: steps.append(step), full=True) == []
        assert checked == [("desktop-memory-writer", True)]
        assert steps  # its progress reached the caller through the job
        assert svc.pending_removals() == [] and not svc.indexed_under(str(gone))
    finally:
        svc.close()
