"""check, compact and the erasing steps on a PostgreSQL library.

Privacy on a server: a removed row is gone from every query at commit, but its bytes stay in the table's pages
until VACUUM reuses them (``compact`` runs VACUUM FULL, which rewrites the tables), and the server's WAL and
backups keep them for as long as the server's own retention says (docs/SHARED.md).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ...errors import Cancelled
from .bulk import vector_tables
from .connection import write_tx
from .postings import CHUNK, merge
from .schema import Conn
from .terms import TOTALS
from .vectors import PgVectors, missing_index

CheckProgress = Callable[[str, int, int], None]
_TABLES = ("term_postings", "token_stage", "segment_stage", "chunks", "documents", "meta", "roots", "exclusions")


def db_bytes(conn: Conn) -> int:
    row = conn.execute("select pg_database_size(current_database())").fetchone()
    return int(str(row[0])) if row else 0


def compact(conn: Conn, url: str, vectors: PgVectors, progress: Callable[[float], None] | None,
            cancel: threading.Event | None) -> tuple[int, int]:
    """The word statistics' small segments merged (postings.py) and any HNSW index an interrupted copy left out
    built, then VACUUM FULL of every table of the library, one table at a time (each its own rewrite: a cancel
    between two keeps what was done). Returns (database bytes before, after)."""
    before = db_bytes(conn)
    with write_tx(conn, url):
        merge(conn)
        conn.execute("delete from token_stage")  # batches of copies that stopped (tokens_ahead.py)
        conn.execute("delete from segment_stage")
    for table in vector_tables(conn):
        with write_tx(conn, url):
            vectors.ensure_index(table)
    if progress is not None:  # (the merge is ~a minute at a million passages: said before the tables' rewrites)
        progress(0.05)
    tables = list(_TABLES) + [f"vectors_{int(str(r[0]))}" for r in conn.execute("select slot from vector_models")]
    for i, table in enumerate(tables):
        if cancel is not None and cancel.is_set():
            raise Cancelled("cancelled")
        conn.execute(f"vacuum (full, analyze) {table}")
        if progress is not None:
            progress(min(0.95, (i + 1) / len(tables)))
    return before, db_bytes(conn)


def check(conn: Conn, vectors: PgVectors, progress: CheckProgress | None,
          cancel: threading.Event | None) -> list[str]:
    """The invariants of the SQLite store's ``check``, on the server's tables: problems, or [] when sound."""
    problems: list[str] = [f"the vectors of {table} have no HNSW index (an interrupted copy): run compact, or the "
                           "copy again" for table in vector_tables(conn) if missing_index(conn, table)]
    steps: list[tuple[str, str, str]] = [
        ("keyword statistics", "select count(*) from chunks c where c.dup_of is null and c.tsv is null",
         "{} passages have no keyword statistics"),
        ("copies", "select count(*) from chunks c left join chunks h on h.id = c.dup_of where c.dup_of is not null "
                   "and (h.id is null or h.dup_of is not null)", "{} copies point at no passage"),
        ("copies' statistics", f"select count(*) from term_postings t cross join unnest(t.postings) p "
                               f"join chunks c on c.id = {CHUNK} where c.dup_of is not null",
         "{} keyword postings belong to copies"),
        ("orphan statistics", f"select count(*) from term_postings t cross join unnest(t.postings) p where not "
                              f"exists (select 1 from chunks c where c.id = {CHUNK})",
         "{} keyword postings belong to no passage"),
        ("statistics' counts", "select count(*) from term_postings where n <> cardinality(postings) or n = 0",
         "{} keyword segments miscount their postings"),
    ]
    table = vectors.table()
    if table is not None:
        steps += [
            ("vectors", f"select count(*) from chunks c where c.embedded and not exists "
                        f"(select 1 from {table} v where v.id = c.id)", "{} passages marked embedded lack a vector"),
            ("vector owners", f"select count(*) from {table} v join chunks c on c.id = v.id where c.dup_of is not "
                              "null or not c.embedded or c.text_hash is distinct from v.text_hash",
             "{} vectors do not belong to their passage's text"),
        ]
    for i, (name, sql, message) in enumerate(steps):
        if cancel is not None and cancel.is_set():
            raise Cancelled("cancelled")
        if progress is not None:
            progress(name, i, len(steps) + 1)
        row = conn.execute(sql).fetchone()
        n = int(str(row[0])) if row else 0
        if n:
            problems.append(message.format(n))
    got = conn.execute(
        "select count(*) filter (where n_words > 0), coalesce(sum(n_words), 0), count(*) filter (where n_grams > 0), "
        "coalesce(sum(n_grams), 0) from chunks where dup_of is null").fetchone()
    stored: dict[str, str] = dict(conn.execute("select key, value from meta where key = any(%s)",
                               ([k for pair in TOTALS for k in pair],)).fetchall())
    if got is not None and [int(str(v)) for v in got] != [int(str(stored.get(k, 0))) for pair in TOTALS
                                                          for k in pair]:
        problems.append("the keyword statistics' totals differ from the passages (run `desktop-memory compact`)")
    if progress is not None:
        progress("done", len(steps) + 1, len(steps) + 1)
    return problems
