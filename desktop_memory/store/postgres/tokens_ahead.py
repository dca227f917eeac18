"""Tokenizing the next writes' passages on side connections while the store writes the current one.

PostgreSQL's text parser is the largest single cost of a write (docs/BENCHMARKS.md, "PostgreSQL bulk writes"),
and one statement runs on one server core. A bulk load (``desktop-memory copy``) knows its next slice before it
writes the current one, so the store's ``prepare_writes`` hands that slice's texts to a worker thread whose own
connection has the same server tokenize them (``to_tsvector('dm_text', …)``: the very function the write would
call, so the stored values are the same) on another core, into the unlogged ``token_stage`` under a batch name
of its own, and groups them into word segments (``segment_stage``). The passages' chunk ids are taken for it there
and then (``nextval``: never reused, taken outside any transaction, so a batch never written leaves a gap and
nothing else). The write that follows takes the batch over: it gives its passages those ids, reads their tsvectors
instead of tokenizing, and copies the segments as they are instead of grouping the postings again; it deletes the
batch in its transaction. (A copy of another passage has no postings: the segments of its words are copied
without it.)

The workers take no lock (a batch is private to its name) and hold no transaction open. Two batches are tokenized
at once (``WORKERS``): on a 2-core machine one tokenizer beside the write was the copy's critical path, two let the
server's cores share the work. Their chunk ids are still taken in the order the batches were queued, a run each,
so ids grow with the writes as the segments' buckets expect (postings.py). The threads and connections are the
store's, made at the first ``prepare_writes`` and closed with the store, which deletes the batches it never wrote.
A batch that does not match the texts written next, or a failure on a side connection, is dropped and the write
tokenizes in its own statement as usual: it costs time, never a wrong row. Cost: two more server connections
during a bulk load.
"""

from __future__ import annotations

import itertools
import threading
import uuid
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import psycopg

from ...errors import StoreError
from .connection import connect
from .postings import pack_sql
from .schema import Conn

KEPT = 3  # batches queued at most: the one being written and the next two
WORKERS = 2  # batches tokenized at once, each on a connection of its own

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
    """``WORKERS`` worker threads, each with its own connection, tokenizing the batches of texts written next."""

    def __init__(self, url: str, password: str | None) -> None:
        self._url, self._password = url, password
        self._pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="dm-pg-tokens")
        self._local = threading.local()  # each worker thread's connection (``conn``), its own only
        self._conns: list[Conn] = []  # all of them, closed by ``close`` once the workers are done
        self._prefix = f"{uuid.uuid4().hex}:"  # this store's batches
        self._names = itertools.count(1)
        self._turn = 0  # the last batch that took its chunk ids: batches take them in the order queued
        self._turns = threading.Condition()
        self._pending: list[tuple[list[str], Future[Staged]]] = []  # oldest first

    def submit(self, texts: Sequence[str]) -> None:
        """Queue ``texts`` for tokenizing (after the batches already queued, of which at most ``KEPT`` stay)."""
        if texts:
            batch = list(texts)
            future = self._pool.submit(self._tokenize, batch, next(self._names))
            self._pending = [*self._pending[-(KEPT - 1):], (batch, future)]

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

    def _tokenize(self, texts: list[str], number: int) -> Staged:
        with self._turns:  # ids in the order the batches are written: each batch's a run of its own
            self._turns.wait_for(lambda: self._turn == number - 1)
            try:  # (the turn passes on whatever happens: a failed batch never holds up the next)
                conn = self._connection()
                ids = [int(str(r[0])) for r in conn.execute(
                    "select nextval('chunks_id_seq') from generate_series(1, %s)", (len(texts),))]
            finally:
                self._turn = number
                self._turns.notify_all()
        batch = f"{self._prefix}{number}"
        conn.execute(_TOKENIZE, (batch, texts, ids))
        conn.execute(_SEGMENTS, (batch,))  # (a failure here: the batch is not taken over at all)
        return Staged(batch, ids)

    def _connection(self) -> Conn:
        conn: Conn | None = getattr(self._local, "conn", None)
        if conn is None or conn.closed or conn.broken:
            conn = self._local.conn = connect(self._url, password=self._password, readonly=False)
            self._conns.append(conn)
        return conn

    def close(self) -> None:
        """Wait for the batches in flight; then, on the closing thread (the workers are gone), delete what was
        never written (a cancelled copy, a dropped batch) and close the connections."""
        self._pending = []
        self._pool.shutdown(wait=True)
        cleared = False
        for conn in self._conns:
            if not cleared and not conn.closed:
                try:
                    for table in ("token_stage", "segment_stage"):
                        conn.execute(f"delete from {table} where batch like %s", (self._prefix + "%",))
                    cleared = True
                except psycopg.Error:
                    pass  # that connection is gone: the next one tries (compact empties the tables anyway)
            conn.close()
        self._conns = []
