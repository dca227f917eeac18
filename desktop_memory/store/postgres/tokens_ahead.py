"""Tokenizing the next write's passages on a second connection while the store writes the current one.

PostgreSQL's text parser is the largest single cost of a write (docs/BENCHMARKS.md, "PostgreSQL bulk writes"),
and one statement runs on one server core. A bulk load (``desktop-memory copy``) knows its next slice before it
writes the current one, so the store's ``prepare_writes`` hands that slice's texts to a worker thread whose own
connection has the same server tokenize them (``to_tsvector('dm_text', …)``: the very function the write would
call, so the stored values are the same) on a second core, into the unlogged ``token_stage`` under a batch name
of its own, and groups them into word segments (``segment_stage``). The passages' chunk ids are taken for it there
and then (``nextval``: never reused, taken outside any transaction, so a batch never written leaves a gap and
nothing else). The write that follows takes the batch over: it gives its passages those ids, reads their tsvectors
instead of tokenizing, and copies the segments as they are instead of grouping the postings again; it deletes the
batch in its transaction. (A copy of another passage has no postings: the segments of its words are copied
without it.)

The worker takes no lock (a batch is private to its name) and holds no transaction open. Its thread and connection
are the store's, made at the first ``prepare_writes`` and closed with the store, which deletes the batches it never
wrote. A batch that does not match the texts written next, or a failure on the side connection, is dropped and the
write tokenizes in its own statement as usual: it costs time, never a wrong row. Cost: one more server connection
during a bulk load.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import psycopg

from ...errors import StoreError
from .connection import connect
from .postings import pack_sql
from .schema import Conn

KEPT = 2  # batches queued at most: the one being written and the next

# The texts travel as a binary array (%b): the server reads 2,000 passages in text array syntax at ~10 µs each,
# a tenth of the statement (docs/BENCHMARKS.md, "PostgreSQL: vectors with their passages").

_TOKENIZE = ("insert into token_stage(batch, i, id, tsv, n_words) select %s, u.i, u.id, w.v, "
             "coalesce((select sum(coalesce(array_length(x.positions, 1), 1)) from unnest(w.v) x), 0) "
             "from unnest(%b::text[], %b::bigint[]) with ordinality u(t, id, i) "
             "cross join lateral (select to_tsvector('dm_text', u.t) as v offset 0) w")
# the batch's word segments under the chunk ids taken for it: the write copies them as they are
_SEGMENTS = ("insert into segment_stage(batch, term, first_id, last_id, n, postings) "
             "select s.batch, x.lexeme, min(s.id), max(s.id), count(*), "
             f"array_agg({pack_sql('s.id', 'coalesce(array_length(x.positions, 1), 1)', 's.n_words')}) "
             "from token_stage s cross join unnest(s.tsv) x where s.batch = %s group by s.batch, x.lexeme")


@dataclass(frozen=True)
class Staged:
    """A batch tokenized ahead: its name in the stage tables and the chunk ids taken for its passages, in order."""

    batch: str
    ids: list[int]


class TokensAhead:
    """One worker thread with its own connection, tokenizing the batches of texts written next, in order."""

    def __init__(self, url: str, password: str | None) -> None:
        self._url, self._password = url, password
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dm-pg-tokens")
        self._conn: Conn | None = None  # the worker thread's only
        self._prefix = f"{uuid.uuid4().hex}:"  # this store's batches
        self._names = itertools.count(1)
        self._pending: list[tuple[list[str], Future[Staged]]] = []  # oldest first

    def submit(self, texts: Sequence[str]) -> None:
        """Queue ``texts`` for tokenizing (after the batches already queued, of which at most ``KEPT`` stay)."""
        if texts:
            batch = list(texts)
            self._pending = [*self._pending[-(KEPT - 1):], (batch, self._pool.submit(self._tokenize, batch))]

    def take(self, texts: Sequence[str]) -> Staged | None:
        """The staged batch of exactly ``texts`` when they were queued (waiting for them), else None; batches queued
        before them are dropped (their rows stay until ``close``)."""
        batch = list(texts)
        for i, (queued, future) in enumerate(self._pending):
            if queued == batch:
                del self._pending[:i + 1]
                try:
                    return future.result()
                except (psycopg.Error, StoreError):
                    return None  # the write tokenizes in its own statement
        return None

    def _tokenize(self, texts: list[str]) -> Staged:
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = connect(self._url, password=self._password, readonly=False)
        batch = f"{self._prefix}{next(self._names)}"
        ids = [int(str(r[0])) for r in self._conn.execute(
            "select nextval('chunks_id_seq') from generate_series(1, %s)", (len(texts),))]
        self._conn.execute(_TOKENIZE, (batch, texts, ids))
        self._conn.execute(_SEGMENTS, (batch,))  # (a failure here: the batch is not taken over at all)
        return Staged(batch, ids)

    def close(self) -> None:
        """Wait for the batch in flight, then close the worker's connection and thread."""
        self._pending = []
        self._pool.submit(self._close_conn)
        self._pool.shutdown(wait=True)

    def _close_conn(self) -> None:
        if self._conn is not None:
            try:  # what was tokenized and never written (a cancelled copy, a dropped batch)
                for table in ("token_stage", "segment_stage"):
                    self._conn.execute(f"delete from {table} where batch like %s", (self._prefix + "%",))
            except psycopg.Error:
                pass  # the server is gone: compact empties the table
            self._conn.close()
            self._conn = None
