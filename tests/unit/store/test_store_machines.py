"""Library folders with their machine, and what ``copy`` reads and writes besides documents, on BOTH stores (the
SQLite file and a PostgreSQL library on a real server): a folder keeps the machine that added it, one recorded
without a machine is claimed by the next machine adding it, a machine's new name goes on all its folders, and
exclusions are read and written back as another library has them."""

from __future__ import annotations

import psycopg
import pytest

from desktop_memory.errors import StoreError
from desktop_memory.store.open import open_store
from tests.support.postgres import pg_server, pg_url, statistics_as_rows  # noqa: F401


@pytest.fixture(params=["sqlite", "postgres"])
def store(request, tmp_path):
    location = str(tmp_path / "library.db") if request.param == "sqlite" else request.getfixturevalue("pg_url")
    s = open_store(location)
    yield s
    s.close()


def test_a_folder_keeps_the_machine_that_added_it(store):
    store.add_root("/home/me/notes")  # no machine recorded ('' = every machine's)
    assert store.root_machines() == [("/home/me/notes", "", "")]
    store.machine = ("id-1", "desktop")
    store.add_root("/home/me/notes")  # added again by a machine: claimed
    store.add_root("/home/me/other", machine=("id-2", "laptop"))
    assert store.root_machines() == [("/home/me/notes", "id-1", "desktop"), ("/home/me/other", "id-2", "laptop")]
    store.add_root("/home/me/other")  # another machine's folder keeps its machine
    assert store.root_machines()[1] == ("/home/me/other", "id-2", "laptop")
    store.add_root("/home/me/more", machine=("id-2", "travel laptop"))  # renamed: all its folders say so
    assert [n for _, m, n in store.root_machines() if m == "id-2"] == ["travel laptop", "travel laptop"]
    assert store.roots() == ["/home/me/more", "/home/me/notes", "/home/me/other"]


def test_exclusions_are_read_and_written_as_another_library_has_them(store):
    assert store.exclusion_rows() == []
    store.add_exclusions([("/home/me/notes/private", "/home/me/notes"), ("/home/me/notes/a.md", "/home/me/notes")])
    assert store.exclusion_rows() == [("/home/me/notes/a.md", "/home/me/notes"),
                                      ("/home/me/notes/private", "/home/me/notes")]
    assert store.excluded() == ["/home/me/notes/a.md", "/home/me/notes/private"]


def test_a_server_library_from_before_machines_keeps_its_folders_as_everyones(pg_url):  # noqa: F811
    store = open_store(pg_url)
    store.add_root("/home/me/notes")
    store.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:  # the library as schema 1 (no machines) left it
        conn.execute("alter table roots drop column machine_id, drop column machine_name")
        statistics_as_rows(conn)
        conn.execute("update dm_schema set version = 1")
    with pytest.raises(StoreError, match="older desktop-memory; open it once with the writer role"):
        open_store(pg_url, readonly=True)  # a reader cannot migrate it: said in one sentence, not a SQL error later
    store = open_store(pg_url)
    try:
        assert store.root_machines() == [("/home/me/notes", "", "")]
    finally:
        store.close()
