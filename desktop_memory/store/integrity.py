"""``desktop-memory check``: the Store's consistency checks (``Store.check_integrity``). Used by tests
after kill -9 too. Every check is a read: on a database opened read-only, FTS5's own self-check (an INSERT) is
skipped.

At a million passages the checks read the whole file (137 s on a loaded laptop), so they run as named steps with a
progress callback and a cancel flag polled inside every statement (SQLite's progress handler interrupts it) and
between batches of the text-hash pass. The quick check (``full=False``, what ``desktop-memory check`` and the app
run) only reads: SQLite's ``pragma quick_check`` (every page, record and constraint; it skips cross-checking each
index entry against its row) and the index's own consistency checks below, so it never takes SQLite's write lock.
``full=True`` runs ``pragma integrity_check`` and FTS5's own 'integrity-check' (an INSERT: it holds the write
lock for as long as it reads the whole full-text index).
The vector checks share passes: one over the vectors joined with their chunks, one over the sign bits.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import apsw

from ..errors import Cancelled
from ..models import chunk_text_hash
from . import migrations as _migrations
from .sql_values import as_int, as_str, scalar, scalar_int
from .vector_rows import VectorRows
from .vectors import code_bytes

CheckProgress = Callable[[str, int, int], None]  # (step name, steps done, steps in all)
HANDLER_STEPS = 20000  # SQLite VM instructions between two looks at the cancel flag
TEXT_BATCH = 20000  # chunks per text-hash batch
REPEAT_S = 2.0  # a long step reports itself again this often


class IntegrityChecks:
    """Consistency checks over documents, chunks, FTS rows and vectors of one connection."""

    STEPS = 5

    def __init__(self, conn: apsw.Connection, mode: str | None, vectors: VectorRows,
                 progress: CheckProgress | None = None, cancel: threading.Event | None = None) -> None:
        self.conn = conn
        self.mode = mode  # read-only / disk-full mode (store/readonly.py), None when writable
        self.vectors = vectors
        self._progress = progress
        self._cancel = cancel
        self._done = 0
        self._name = ""  # the step running now

    def _step(self, name: str) -> None:
        if self._cancel is not None and self._cancel.is_set():
            raise Cancelled("check cancelled")
        self._name = name
        if self._progress is not None:
            self._progress(name, self._done, self.STEPS)
        self._done += 1

    @contextmanager
    def _cancellable(self) -> Iterator[None]:
        """A cancel interrupts the running statement (apsw raises InterruptError): the check stops within ~0.1 s.
        A long statement (SQLite's page check reads the whole file: a minute at 1M) reports its step again every
        ``REPEAT_S``, so the CLI's line every few seconds and the window's progress keep coming."""
        cancel, progress = self._cancel, self._progress
        if cancel is None and progress is None:
            yield
            return
        last = time.monotonic()

        def handler() -> bool:
            nonlocal last
            if progress is not None and self._name and time.monotonic() - last >= REPEAT_S:
                last = time.monotonic()
                progress(self._name, self._done - 1, self.STEPS)
            return cancel is not None and cancel.is_set()

        self.conn.set_progress_handler(handler, HANDLER_STEPS)
        try:
            yield
        except apsw.InterruptError as exc:
            raise Cancelled("check cancelled") from exc
        finally:
            self.conn.set_progress_handler(None)

    def check_integrity(self, full: bool = True) -> list[str]:
        """Consistency problems (empty list = healthy). Used by tests after kill -9 and by `desktop-memory check`."""
        with self._cancellable():
            return self._checks(full)

    def _checks(self, full: bool) -> list[str]:
        problems = []
        self._step("SQLite's page check")
        pragma = "integrity_check" if full else "quick_check"
        ok = scalar(self.conn, f"pragma {pragma}")
        if ok != "ok":
            problems.append(f"{pragma}: {ok}")
        problems += _migrations.schema_problems(self.conn)
        if problems:
            return problems  # the checks below would only fail on what is missing
        self._step("full-text index")
        # FTS5's self-check is an INSERT: it cannot run on a database opened read-only, and it holds SQLite's write
        # lock while it reads the whole index (29 s at a million passages), so only the full check runs it
        if full and not self.mode:
            try:
                # Internal consistency only: rank=1 would also compare against the content table, where collapsed
                # duplicates deliberately have no FTS row.
                self.conn.execute("insert into chunks_fts(chunks_fts) values('integrity-check')")
            except apsw.InterruptError:
                raise
            except apsw.Error as exc:
                problems.append(f"fts integrity: {exc}")
        fts_rows = scalar_int(self.conn, "select count(*) from chunks_fts_docsize")
        canon = scalar_int(self.conn, "select count(*) from chunks where dup_of is null")
        if fts_rows != canon:
            problems.append(f"fts rows {fts_rows} != canonical chunks {canon}")
        problems += self._check_vectors()
        return problems

    def _check_vectors(self) -> list[str]:
        problems = []
        model, dim = self.vectors.model_info()
        self._step("vectors")
        # one pass over the vectors with their chunks: count, orphans, text identity, size
        vecs, orphans, wrong, bad_size = (as_int(v) for v in self.conn.execute(
            "select count(*), "
            "       coalesce(sum(c.id is null or c.embedded != 1 or c.dup_of is not null), 0), "
            "       coalesce(sum(c.id is not null and (v.text_hash is null or v.text_hash is not c.text_hash)), 0), "
            "       coalesce(sum(length(v.embedding) != ?), 0) "
            "from chunk_vectors v left join chunks c on c.id = v.id", (4 * (dim or 0),)
        ).fetchall()[0])
        if orphans:
            problems.append(f"{orphans} vectors without a live embedded chunk")
        flagged = scalar_int(self.conn, "select count(*) from chunks where embedded=1")
        if vecs != flagged:
            problems.append(f"vectors {vecs} != chunks flagged embedded {flagged}")
        self._step("bit codes")
        bits, unpaired_bits, bad_bits = (as_int(v) for v in self.conn.execute(
            "select count(*), coalesce(sum(v.id is null), 0), coalesce(sum(length(b.bits) != ?), 0) "
            "from chunk_vector_bits b left join chunk_vectors v on v.id = b.id", (code_bytes(dim or 0),)
        ).fetchall()[0])
        unpaired = unpaired_bits + (vecs - (bits - unpaired_bits))  # bits without a vector + vectors without bits
        if unpaired:
            problems.append(f"{unpaired} vectors and sign-bit rows do not pair up")
        if wrong:
            problems.append(f"{wrong} vectors were computed from another text than their chunk's "
                            "(run `desktop-memory reembed`)")
        if vecs and model is None:
            problems.append(f"{vecs} vectors stored but no model recorded")
        if dim and (bad_size or bad_bits):
            problems.append(f"{bad_size + bad_bits} vectors or bit-code rows have the wrong size for {dim} dimensions")
        self._step("passage texts")
        stale = self._stale_text_hashes()
        if stale:
            problems.append(f"{stale} chunks have a text hash that does not match their text")
        return problems

    def _stale_text_hashes(self) -> int:
        """Chunks whose stored hash is not their text's (in id batches, so a cancel is seen between them)."""
        stale, after, t_last = 0, 0, time.monotonic()
        while True:
            rows = self.conn.execute("select id, text, text_hash from chunks where id > ? order by id limit ?",
                                     (after, TEXT_BATCH)).fetchall()
            if not rows:
                return stale
            stale += sum(1 for _, text, h in rows if h != chunk_text_hash(as_str(text)))
            after = as_int(rows[-1][0])
            if self._cancel is not None and self._cancel.is_set():
                raise Cancelled("check cancelled")
            if self._progress is not None and time.monotonic() - t_last > 1.0:
                t_last = time.monotonic()
                self._progress(f"passage texts (up to id {after:,})", self._done - 1, self.STEPS)
