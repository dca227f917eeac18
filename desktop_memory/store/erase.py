"""Removed means gone: how deleted and replaced text leaves the database files (issue 16, docs/PRIVACY.md).

Every connection runs with ``PRAGMA secure_delete`` (deleted rows are zeroed) and the FTS index has FTS5's
persistent ``secure-delete`` option (migration): a deleted row's terms are taken out of the index pages instead of
being hidden by a tombstone. That per-row erase rewrites the pages of every term of the row (25-60 ms a document on
a 10,000-document library), while merging the whole index into one segment ('optimize') drops every deleted entry
at once (0.3 s for 24,000 chunks). So the first BULK_ERASE documents an operation (an index run, a removal) replaces
or removes use secure-delete; beyond that the operation deletes with plain tombstones and optimizes once at its end
(``checkpoint_erased``), which also truncates the WAL, where the pages as they were before the delete still sit.

At a million passages that one 'optimize' rewrites the whole FTS index (tens of seconds holding the writer), so a
removal (service ``remove_paths``) runs the same merge in slices instead (:meth:`Eraser.merge_step`: FTS5's 'merge'
with a negative page count merges every segment whatever its level, as 'optimize' does, ``MERGE_PAGES`` pages a
transaction), the writer free for others between slices; the final ``checkpoint_erased`` then finds the index
already merged.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import apsw

from ..errors import Cancelled
from .meta import MetaTable
from .sql_values import scalar_int

BULK_ERASE = 25
COMPACT_HANDLER_STEPS = 100000  # SQLite VM instructions between two progress/cancel looks during VACUUM
VACUUM_STEPS_PER_PAGE = 48  # measured (100k passages): VM instructions VACUUM runs per page, for its progress
PROGRESS_EVERY_S = 0.5  # how often the VACUUM reports its progress
MERGE_PAGES = 1000  # FTS5 leaf pages merged per transaction by merge_step (~0.3 s each on a loaded laptop)


class Eraser:
    """The Store's erase steps (``Store.eraser``) and what they must remember between documents."""

    def __init__(self, conn: apsw.Connection, meta: MetaTable, db_bytes: Callable[[], int]) -> None:
        self.conn = conn
        self.meta = meta
        self.db_bytes = db_bytes  # the file's size with its -wal/-shm
        self.erased = False  # rows were deleted since the last checkpoint: their old pages may sit in the WAL
        self.erased_docs = 0  # documents replaced or removed by the current operation (see BULK_ERASE)

    def checkpoint(self) -> bool:
        """Copy the WAL into the database and truncate it to zero bytes (TRUNCATE checkpoint).

        With ``secure_delete`` the database file no longer holds deleted rows, but the WAL still holds the pages
        as they were before the delete until a checkpoint rewrites and truncates it. Returns False when a reader
        on another connection kept part of the WAL alive (it waits for them up to the busy timeout first)."""
        try:
            row = self.conn.execute("pragma wal_checkpoint(TRUNCATE)").fetchone()
        except apsw.BusyError:
            return False
        return row is not None and not row[0]  # (busy, wal frames, frames checkpointed)

    def checkpoint_erased(self) -> bool:
        """End of an operation that replaced or removed documents: erase what is still recoverable.

        Documents deleted with FTS tombstones (beyond BULK_ERASE in one operation, or left by an operation that
        was killed: ``meta.fts_optimize_pending``) are dropped from the index by one 'optimize'; then the WAL is
        checkpointed and truncated. A cheap no-op when nothing was deleted."""
        self.erased_docs = 0
        if self.meta.get("fts_optimize_pending"):
            with self.conn:
                self.conn.execute("insert into chunks_fts(chunks_fts) values('optimize')")
                self.conn.execute("delete from meta where key = 'fts_optimize_pending'")
            self.erased = True
        if not self.erased:
            return True
        done = self.checkpoint()
        self.erased = not done
        return done

    def erasing_in_bulk(self) -> bool:
        """Count one more document erased by this operation; True once past BULK_ERASE. In bulk, the caller's
        transaction deletes with plain tombstones and records that the index needs an 'optimize' (in the same
        transaction, so a crash before the end of the operation leaves the flag for the next one)."""
        self.erased_docs += 1
        if self.erased_docs <= BULK_ERASE:
            return False
        self.meta.set("fts_optimize_pending", "1")
        return True

    def merge_step(self, pages: int = MERGE_PAGES, always: bool = False) -> bool:
        """One transaction of the FTS index's incremental 'optimize' while deleted rows wait for it
        (``meta.fts_optimize_pending``). Returns True when it merged something (call again), False when nothing is
        pending or the index is fully merged (then ``checkpoint_erased`` finishes cheaply). ``always``: merge even
        when nothing is pending (compaction)."""
        if not always and not self.meta.get("fts_optimize_pending"):
            return False
        before = self.conn.total_changes()
        with self.conn:
            self.conn.execute("insert into chunks_fts(chunks_fts, rank) values('merge', ?)", (-abs(pages),))
        self.erased = True
        return self.conn.total_changes() - before >= 2  # FTS5's documented "did it do any work" test

    def fts_secure_delete(self, on: bool) -> None:
        """Switch FTS5's persistent secure-delete option; only ever off inside one transaction (see callers)."""
        self.conn.execute("insert into chunks_fts(chunks_fts, rank) values('secure-delete', ?)", (int(on),))

    def compact(self, progress: Callable[[float], None] | None = None,
                cancel: threading.Event | None = None) -> tuple[int, int]:
        """Rebuild the file from live data only ("Compact and erase"): FTS5 segments merged (older deletions
        that predate secure-delete dropped), VACUUM, WAL truncated. Returns (bytes before, bytes after).

        ``progress(fraction)`` is called about twice a second during the VACUUM (an estimate from SQLite's
        instruction count, see ``VACUUM_STEPS_PER_PAGE``), and ``cancel`` interrupts it: SQLite rolls the VACUUM
        back whole, so a cancelled (or killed) compaction leaves the library exactly as it was
        (:class:`Cancelled` is raised)."""
        before = self.db_bytes()
        with self.conn:
            self.conn.execute("insert into chunks_fts(chunks_fts) values('optimize')")
        pages = max(1, scalar_int(self.conn, "pragma page_count"))
        calls, last = 0, time.monotonic()

        def tick() -> bool:
            nonlocal calls, last
            calls += 1
            if progress is not None and time.monotonic() - last >= PROGRESS_EVERY_S:
                last = time.monotonic()
                progress(min(0.95, calls * COMPACT_HANDLER_STEPS / (pages * VACUUM_STEPS_PER_PAGE)))
            return cancel is not None and cancel.is_set()

        self.conn.set_progress_handler(tick, COMPACT_HANDLER_STEPS)
        try:
            self.conn.execute("vacuum")
        except apsw.InterruptError as exc:
            raise Cancelled("compaction cancelled: the library is as it was") from exc
        finally:
            self.conn.set_progress_handler(None)
        self.erased = True
        self.checkpoint_erased()
        if progress is not None:
            progress(1.0)
        return before, self.db_bytes()
