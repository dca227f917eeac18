"""A real PostgreSQL 16 with pgvector for the tests (the PyPI package ``pgserver``): one private server per test
session in a temp folder, a fresh database per test. No mock of the database anywhere.

As root (CI), pgserver runs the server as its own unprivileged ``pgserver`` user; the folder it gets must be one
that user can reach, hence a folder of its own under the system temp folder rather than pytest's (owner-only) one.
Test modules import the fixtures they use: ``from tests.support.postgres import pg_server, pg_url  # noqa: F401``.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

_NAMES = itertools.count(1)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """The session's server (pgserver's PostgresServer): started once, stopped and deleted at the end."""
    import pgserver

    folder = tempfile.mkdtemp(prefix="dm-pgserver-")
    server = pgserver.get_server(folder, cleanup_mode="stop")
    # a throw-away server: no fsync, so creating a database per test and the shutdown checkpoint stay quick on a
    # loaded machine (the stores' transactions behave the same; only durability after a power cut differs)
    import psycopg

    with psycopg.connect(_base_url(server), autocommit=True) as conn:
        for setting in ("fsync", "synchronous_commit", "full_page_writes"):
            conn.execute(f"alter system set {setting} = off")
        conn.execute("select pg_reload_conf()")
    try:
        yield server
    finally:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


def _base_url(server: Any) -> str:
    return str(server.get_uri())


def fresh_database(server: Any, *, vector: bool = True) -> str:
    """A new empty database on the session's server (with the pgvector extension unless ``vector`` is False);
    returns its URL."""
    import psycopg

    name = f"dm_test_{next(_NAMES)}"
    with psycopg.connect(_base_url(server), autocommit=True) as conn:
        conn.execute(f"drop database if exists {name}")
        conn.execute(f"create database {name}")
    url = _base_url(server).replace("/postgres?", f"/{name}?")
    if vector:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("create extension if not exists vector")
    return url


@pytest.fixture
def pg_url(pg_server: Any) -> str:
    """The URL of a fresh database with pgvector, for this test only."""
    return fresh_database(pg_server)


def statistics_as_rows(conn: Any) -> None:
    """Turn a library's word statistics back into schema 2's form, a row per word and passage (``chunk_terms``),
    so a test can stand up a library as an older desktop-memory left it (the migration to segments then runs; the
    tokenizing stage it also makes goes too)."""
    conn.execute("create table chunk_terms (lane smallint not null, term text not null, chunk_id bigint not null, "
                 "tf integer not null, dl integer not null, primary key (lane, term, chunk_id) include (tf, dl))")
    conn.execute("insert into chunk_terms select t.lane, t.term, p >> 25, (p >> 16) & 511, p & 65535 "
                 "from term_postings t cross join unnest(t.postings) p")
    conn.execute("drop table term_postings, token_stage, segment_stage")
