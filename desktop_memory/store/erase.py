"""Removed means gone: how deleted and replaced text leaves the database files (issue 16, docs/PRIVACY.md).

Every connection runs with ``PRAGMA secure_delete`` (deleted rows are zeroed) and the FTS index has FTS5's
persistent ``secure-delete`` option (migration): a deleted row's terms are taken out of the index pages instead of
being hidden by a tombstone. That per-row erase rewrites the pages of every term of the row (25-60 ms a document on
a 10,000-document library), while merging the whole index into one segment ('optimize') drops every deleted entry
at once (0.3 s for 24,000 chunks). So the first BULK_ERASE documents an operation (an index run, a removal) replaces
or removes use secure-delete; beyond that the operation deletes with plain tombstones and optimizes once at its end
(``checkpoint_erased``), which also truncates the WAL, where the pages as they were before the delete still sit.
"""

from __future__ import annotations

from collections.abc import Callable

import apsw

from .meta import MetaTable

BULK_ERASE = 25


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

    def fts_secure_delete(self, on: bool) -> None:
        """Switch FTS5's persistent secure-delete option; only ever off inside one transaction (see callers)."""
        self.conn.execute("insert into chunks_fts(chunks_fts, rank) values('secure-delete', ?)", (int(on),))

    def compact(self) -> tuple[int, int]:
        """Rebuild the file from live data only ("Compact and erase"): FTS5 segments merged (older deletions
        that predate secure-delete dropped), VACUUM, WAL truncated. Returns (bytes before, bytes after)."""
        before = self.db_bytes()
        with self.conn:
            self.conn.execute("insert into chunks_fts(chunks_fts) values('optimize')")
        self.conn.execute("vacuum")
        self.erased = True
        self.checkpoint_erased()
        return before, self.db_bytes()
