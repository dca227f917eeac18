"""The service owns its connections: one writer, a bounded reader pool, reused across threads, closed on close()."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.errors import StoreError
from desktop_memory.service import MemoryService


def _db_fds(db: Path) -> int:
    """Descriptors this process holds on the database (main file, -wal, -shm)."""
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith(str(db)):
                n += 1
        except OSError:
            pass
    return n


@pytest.fixture
def library(tmp_path: Path) -> Path:
    d = tmp_path / "notes"
    d.mkdir()
    for i in range(12):
        (d / f"n{i}.md").write_text(f"# Note {i}\n\nTopic {i}: gardens, tomatoes and compost number {i}.\n")
    return d


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc to count descriptors")
def test_many_threads_share_a_bounded_pool(tmp_path, library):
    db = tmp_path / "m.db"
    svc = MemoryService(Settings(), db_path=db, embedder=HashEmbedder(64), readers=2)
    try:
        svc.index_paths([library])
        fds_before = _db_fds(db)
        seen: set[int] = set()

        def work(i: int) -> int:
            seen.add(threading.get_ident())
            svc.stats()
            svc.documents()
            return len(svc.search_outcome(f"compost {i % 12}", backend="hybrid").results)

        # 400 calls from 16 threads that come and go (like QThreadPool's): never more than 1 + 2 connections
        for _ in range(4):
            with ThreadPoolExecutor(max_workers=16) as pool:
                assert all(n > 0 for n in pool.map(work, range(100)))
        assert len(seen) > 2
        assert svc.open_connections() <= 3
        assert _db_fds(db) <= fds_before + 2 * 3  # each new reader holds at most the db file and the wal
    finally:
        svc.close()
    assert svc.open_connections() == 0
    assert _db_fds(db) == 0
    with pytest.raises(StoreError, match="closed"):
        svc.stats()


def test_a_reader_lease_is_exclusive_and_reused(tmp_path, library):
    svc = MemoryService(Settings(), db_path=tmp_path / "m.db", embedder=HashEmbedder(64), readers=1)
    try:
        with svc.reading() as first:
            pass
        with svc.reading() as again:
            assert again is first  # the same connection comes back: nothing is opened per call
        got: list[object] = []
        with svc.reading() as held:
            t = threading.Thread(target=lambda: got.append(svc.roots()))
            t.start()
            t.join(0.3)
            assert t.is_alive() and not got  # the only reader is leased: the other thread waits its turn
        t.join(5)
        assert got == [[]] and held is first
    finally:
        svc.close()


def test_change_stamp_moves_on_every_kind_of_change(tmp_path, library):
    svc = MemoryService(Settings(), db_path=tmp_path / "m.db", embedder=HashEmbedder(64))
    try:
        stamps = [svc.change_stamp()]
        svc.index_paths([library], embed=False)
        stamps.append(svc.change_stamp())
        svc.embed_pending()
        stamps.append(svc.change_stamp())
        (library / "bad.pdf").write_bytes(b"%PDF-1.4 not really")
        svc.index_paths([library / "bad.pdf"])  # a failed file is recorded: the Library must show it
        stamps.append(svc.change_stamp())
        svc.remove_paths([library / "n0.md"])
        stamps.append(svc.change_stamp())
        assert len(set(stamps)) == len(stamps), stamps
        assert svc.change_stamp() == stamps[-1]  # reading changes nothing
    finally:
        svc.close()
