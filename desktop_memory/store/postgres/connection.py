"""One psycopg 3 connection per store (the service leases stores one per thread, as with SQLite), and what a
server's failures mean in one sentence.

Writes are serialised across machines by a transaction-scoped advisory lock taken first in every write
transaction (``write_tx``): two machines indexing at once take turns per slice, as two SQLite processes do with
BEGIN IMMEDIATE, and a lost connection releases the lock with the transaction. Reads never take it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg.conninfo import make_conninfo

from ...errors import StoreError, StoreReadOnly
from ..location import redacted
from .schema import Conn

WRITER_LOCK = 7_404_339_211  # pg_advisory_xact_lock key of a library's writer (one library per database)


def connect(url: str, *, password: str | None, readonly: bool) -> Conn:
    """An autocommit connection (each read sees the latest commit; writes open explicit transactions)."""
    try:
        # make_conninfo leaves out a None password: libpq then finds it in PGPASSWORD, .pgpass or a service file
        info = make_conninfo(url, password=password, connect_timeout=10, application_name="desktop-memory")
        conn = psycopg.connect(info, autocommit=True)
    except psycopg.OperationalError as exc:
        raise StoreError(f"Cannot connect to the library at {redacted(url)}: {_first_line(exc)}.") from exc
    except psycopg.ProgrammingError as exc:  # a malformed URL
        raise StoreError(f"The library address {redacted(url)} is not a valid PostgreSQL URL: "
                         f"{_first_line(exc)}.") from exc
    if readonly:
        conn.execute("set default_transaction_read_only = on")
    return conn


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__).rstrip(".")


@contextmanager
def write_tx(conn: Conn, url: str) -> Iterator[None]:
    """One write transaction holding the library's writer lock (released at commit or rollback)."""
    try:
        with conn.transaction():
            conn.execute("select pg_advisory_xact_lock(%s)", (WRITER_LOCK,))
            yield
    except psycopg.errors.ReadOnlySqlTransaction as exc:
        raise StoreReadOnly(f"The library at {redacted(url)} is open read-only; indexing and changes need a "
                            "connection with the writer role.") from exc
    except psycopg.errors.InsufficientPrivilege as exc:
        raise StoreReadOnly(f"The database role used for {redacted(url)} may not write this library "
                            f"({_first_line(exc)}); use the writer role for indexing and changes.") from exc
    except psycopg.OperationalError as exc:
        raise StoreError(f"The connection to the library at {redacted(url)} was lost: {_first_line(exc)}; "
                         "nothing of the unfinished step was written, run it again.") from exc


def translate(exc: BaseException, url: str) -> StoreError | None:
    """A psycopg error as the StoreError the front ends show, or None for a programming error (a bug)."""
    if isinstance(exc, psycopg.errors.InsufficientPrivilege):
        return StoreReadOnly(f"The database role used for {redacted(url)} lacks a right this needs: "
                             f"{_first_line(exc)}.")
    if isinstance(exc, psycopg.OperationalError):
        return StoreError(f"The library at {redacted(url)} cannot be reached: {_first_line(exc)}.")
    return None
