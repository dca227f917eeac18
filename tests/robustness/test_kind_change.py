"""Issue 21 §4/§5: a path whose kind changed (file → folder, folder → file) is reconciled by ``index``, the
watcher's catch-up scan and the live watch: the old entry leaves the index, the new one is indexed.

Real folders in tmp, the real store, the hashing embedder, a real watchdog observer.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from desktop_memory.config import Settings, WatchSettings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.service import MemoryService
from desktop_memory.watch import Watcher


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[MemoryService]:
    service = MemoryService(Settings(watch=WatchSettings(quiet_ms=100, max_wait_ms=1000)),
                            db_path=tmp_path / "db" / "memory.db", embedder=HashEmbedder(64))
    yield service
    service.close()


def _paths(svc: MemoryService) -> set[str]:
    return {d.path for d in svc.documents()}


def _wait(cond: Callable[[], bool], what: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _notes(tmp_path: Path) -> Path:
    notes = tmp_path / "notes"
    (notes / "y").mkdir(parents=True)
    (notes / "x.md").write_text("# X\n\nmarmalade quince\n")
    (notes / "y" / "a.md").write_text("# A\n\nbergamot zest\n")
    return notes


def _flip(notes: Path) -> None:
    """x.md becomes a folder holding a file; the folder y becomes a file."""
    (notes / "x.md").unlink()
    (notes / "x.md").mkdir()
    (notes / "x.md" / "inner.md").write_text("# Inner\n\nhi there cardamom\n")
    shutil.rmtree(notes / "y")
    (notes / "y").write_text("y is a file now: saffron\n")


def _reconciled(svc: MemoryService, notes: Path) -> bool:
    return _paths(svc) == {str(notes / "x.md" / "inner.md"), str(notes / "y")}


def test_index_reconciles_both_directions(tmp_path, svc):
    notes = _notes(tmp_path)
    svc.index_paths([notes])
    assert _paths(svc) == {str(notes / "x.md"), str(notes / "y" / "a.md")}
    _flip(notes)
    svc.index_paths([notes])
    assert _reconciled(svc, notes), _paths(svc)
    assert [r.source for r in svc.search_outcome("marmalade", backend="keyword").results] == []
    assert svc.check() == []


def test_naming_the_changed_path_itself_reconciles_it(tmp_path, svc):
    notes = _notes(tmp_path)
    svc.index_paths([notes])
    _flip(notes)
    svc.index_paths([notes / "x.md", notes / "y"])  # as the watcher and a person naming them do
    assert _reconciled(svc, notes), _paths(svc)


def test_a_file_replaced_by_an_empty_folder_leaves_the_index(tmp_path, svc):
    notes = _notes(tmp_path)
    svc.index_paths([notes])
    (notes / "x.md").unlink()
    (notes / "x.md").mkdir()
    svc.index_paths([notes])
    assert str(notes / "x.md") not in _paths(svc)


def test_catch_up_reconciles_what_changed_while_closed(tmp_path, svc):
    notes = _notes(tmp_path)
    svc.index_paths([notes])
    _flip(notes)
    watcher = Watcher(svc)
    watcher.start()
    try:
        assert watcher.ready.wait(90)
        _wait(lambda: _reconciled(svc, notes), "the catch-up scan to reconcile")
    finally:
        watcher.stop()


def test_the_live_watch_reconciles_both_directions(tmp_path, svc):
    notes = _notes(tmp_path)
    svc.index_paths([notes])
    watcher = Watcher(svc)
    watcher.start()
    try:
        assert watcher.ready.wait(90)
        _flip(notes)
        _wait(lambda: _reconciled(svc, notes), "the watch to reconcile")
        (notes / "x.md" / "inner.md").unlink()
        (notes / "x.md").rmdir()
        (notes / "x.md").mkdir()  # an empty folder in place of the old file
        _wait(lambda: _paths(svc) == {str(notes / "y")}, "the empty folder to clear the old entry")
    finally:
        watcher.stop()
    assert svc.check() == []
