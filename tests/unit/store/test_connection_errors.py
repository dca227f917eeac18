"""Store errors are told apart by class (busy, full, read-only, damaged, not ours), never by their words."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from desktop_memory.errors import (
    NotOurDatabase,
    StoreBusy,
    StoreDamaged,
    StoreError,
    StoreFull,
    StoreReadOnly,
    UserError,
)
from desktop_memory.store import Store
from desktop_memory.store.connection import probe_busy, translate_error


@pytest.mark.parametrize(("raised", "expected"), [
    (apsw.BusyError, StoreBusy),
    (apsw.FullError, StoreFull),
    (apsw.ReadOnlyError, StoreReadOnly),
    (apsw.CorruptError, StoreDamaged),
])
def test_sqlite_errors_become_typed_store_errors(tmp_path: Path, raised: type[apsw.Error],
                                                 expected: type[StoreError]) -> None:
    found = translate_error(raised("simulated"), tmp_path / "m.db")
    assert type(found) is expected and isinstance(found, UserError)


def test_a_foreign_sqlite_file_is_not_ours_and_stays_untouched(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = apsw.Connection(str(path))
    conn.execute("create table notes(x)")
    conn.close()
    before = path.read_bytes()
    with pytest.raises(NotOurDatabase):
        Store(path)
    assert path.read_bytes() == before


def test_a_damaged_schema_says_what_to_do_without_parsing_the_message(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    Store(path).close()
    conn = apsw.Connection(str(path))
    conn.execute("drop table chunk_vector_bits")
    conn.close()
    with pytest.raises(StoreDamaged) as info:
        Store(path)
    assert info.value.problems == ["table chunk_vector_bits is missing"]
    assert info.value.advice.endswith("Nothing was changed.") and info.value.advice in str(info.value)


def test_a_locked_database_is_busy(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    Store(path).close()
    holder = apsw.Connection(str(path))
    holder.execute("pragma locking_mode=exclusive")  # what a migration in another process holds
    holder.execute("begin exclusive")
    try:
        with pytest.raises(StoreBusy):
            probe_busy(path, 50)
    finally:
        holder.execute("rollback")
        holder.close()


def test_a_writer_waits_its_turn_says_so_and_gives_up_only_after_the_upper_bound(tmp_path: Path, monkeypatch) -> None:
    """Issue 30 item 6: a write waits for another process's lock (telling the listeners once, after a few seconds)
    and fails with "busy" only after BUSY_WAIT_S (10 minutes by default; shortened here)."""
    import threading
    import time

    from desktop_memory.config import Settings
    from desktop_memory.embed.hashing import HashEmbedder
    from desktop_memory.service import MemoryService
    from desktop_memory.store import connection

    monkeypatch.setattr(connection, "BUSY_NOTICE_S", 0.3)
    monkeypatch.setattr(connection, "BUSY_WAIT_S", 1.5)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("papaya grove\n", encoding="utf-8")
    told: list[str] = []
    stop = connection.on_busy_wait(told.append)
    svc = MemoryService(Settings(), db_path=tmp_path / "m.db", embedder=HashEmbedder(64))
    holder = apsw.Connection(str(tmp_path / "m.db"))
    try:
        holder.execute("begin immediate")
        started = time.monotonic()
        with pytest.raises(StoreBusy, match="is busy"):
            svc.index_paths([notes])
        assert 1.4 < time.monotonic() - started < 10
        assert told == [connection.waiting_message(tmp_path / "m.db")], "one notice per wait"
        # a holder that lets go within the bound: the write goes on, no error
        threading.Timer(0.6, lambda: holder.execute("commit")).start()
        told.clear()
        assert svc.index_paths([notes]).indexed == 1
        assert len(told) == 1
    finally:
        stop()
        if holder.in_transaction:
            holder.execute("rollback")
        holder.close()
        svc.close()


def test_closing_the_library_ends_a_write_waiting_for_another_process(tmp_path: Path) -> None:
    """Quit or a database switch while another process holds the lock: the waiting write gives up at once (it does
    not hold the close for the long bound)."""
    import threading
    import time

    from desktop_memory.config import Settings
    from desktop_memory.embed.hashing import HashEmbedder
    from desktop_memory.service import MemoryService

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("medlar tart\n", encoding="utf-8")
    svc = MemoryService(Settings(), db_path=tmp_path / "m.db", embedder=HashEmbedder(64))
    holder = apsw.Connection(str(tmp_path / "m.db"))
    holder.execute("begin immediate")
    job = svc.scheduler.read([str(notes)])
    try:
        time.sleep(1.0)  # the read waits for the holder's lock
        assert not job.finished
        started = time.monotonic()
        closer = threading.Thread(target=svc.close)
        closer.start()
        closer.join(20)
        assert not closer.is_alive() and time.monotonic() - started < 10
        assert job.finished and isinstance(job.error, StoreBusy)
    finally:
        holder.execute("rollback")
        holder.close()
