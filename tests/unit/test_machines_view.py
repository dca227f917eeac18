"""Several machines, one library (issue 32 item 3): each library folder is its machine's; each machine reads and
watches only its own; everyone searches everything, and a result from another machine names it.

Two config folders are two machines sharing one PostgreSQL + pgvector library on a real server
(tests/support/postgres.py); a SQLite file stays one machine's (the last tests)."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.errors import UserError
from desktop_memory.service import MemoryService
from desktop_memory.store import Store
from desktop_memory.store.migrations import SCHEMA_VERSION
from tests.support.postgres import pg_server, pg_url  # noqa: F401


def _folder(base: Path, name: str, text: str) -> Path:
    folder = base / name
    folder.mkdir(parents=True)
    (folder / "plan.md").write_text(f"# Plan\n\n{text}\n")
    return folder


def _service(monkeypatch: pytest.MonkeyPatch, base: Path, machine: str, db: Path | str) -> MemoryService:
    monkeypatch.setenv("DESKTOP_MEMORY_CONFIG_DIR", str(base / f"config-{machine}"))
    return MemoryService(Settings(machine_name=machine), db_path=db, embedder=HashEmbedder(32))


@pytest.fixture
def shared(pg_url):  # noqa: F811
    """The shared library: a fresh database on the session's PostgreSQL server."""
    return pg_url


@pytest.fixture
def two_machines(monkeypatch, tmp_path, shared):
    db = shared
    desk_dir = _folder(tmp_path / "desk", "notes", "The harbour bridge opens in spring.")
    lap_dir = _folder(tmp_path / "lap", "notes", "Tomatoes need sun and water every morning.")
    desk = _service(monkeypatch, tmp_path, "desktop", db)
    lap = _service(monkeypatch, tmp_path, "laptop", db)
    desk.index_paths([desk_dir])
    lap.index_paths([lap_dir])
    yield desk, lap, desk_dir, lap_dir
    desk.close()
    lap.close()


def test_each_machine_has_its_own_folders_and_searches_everything(two_machines):
    desk, lap, desk_dir, lap_dir = two_machines
    assert desk.machine[0] != lap.machine[0]
    assert desk.roots() == [str(desk_dir)] and lap.roots() == [str(lap_dir)]  # what each reads and watches
    assert sorted(desk.library_folders()) == sorted([str(desk_dir), str(lap_dir)])
    assert desk.other_machines() == {str(lap_dir): "laptop"}
    hits = desk.search_outcome("tomatoes sun water", backend="keyword").results
    assert hits and hits[0].source == str(lap_dir / "plan.md")
    assert (hits[0].machine, hits[0].remote) == ("laptop", True)
    assert hits[0].to_dict()["machine"] == "laptop"
    own = desk.search_outcome("harbour bridge spring", backend="keyword").results
    assert (own[0].machine, own[0].remote) == ("desktop", False)
    outcome = desk.search_outcome("tomatoes sun water", backend="hybrid")
    assert all(r.machine for r in [*outcome.results, *outcome.files])


def test_another_machines_folder_is_not_read_here(two_machines):
    desk, lap, _desk_dir, lap_dir = two_machines
    with pytest.raises(UserError, match="library folder of laptop"):
        desk.index_paths([lap_dir / "plan.md"])
    with pytest.raises(UserError, match="library folder of laptop"):
        desk.index_paths([lap_dir.parent])  # a folder holding it
    assert lap.roots() == [str(lap_dir)]


def test_a_folder_removed_on_one_machine_leaves_its_own_machine(two_machines):
    desk, lap, _desk_dir, lap_dir = two_machines
    desk.remove_paths([str(lap_dir)])
    assert lap.roots() == []  # the laptop's watcher follows the folders stored in the library
    assert not desk.search_outcome("tomatoes sun water", backend="keyword").results


def test_a_renamed_machine_is_shown_by_its_new_name(monkeypatch, tmp_path, two_machines, shared):
    desk, _lap, _desk_dir, lap_dir = two_machines
    monkeypatch.setenv("DESKTOP_MEMORY_CONFIG_DIR", str(tmp_path / "config-laptop"))
    renamed = MemoryService(Settings(machine_name="old laptop"), db_path=shared,
                            embedder=HashEmbedder(32))
    try:
        renamed.index_paths([lap_dir])  # the same machine (same config folder): its folder, its new name
        assert renamed.roots() == [str(lap_dir)]
    finally:
        renamed.close()
    assert desk.other_machines() == {str(lap_dir): "old laptop"}


def test_a_sqlite_file_is_one_machines_as_before(monkeypatch, tmp_path):
    """No URL, no change: folders in a SQLite file are recorded without a machine, and every config folder that
    opens the file reads and watches all of them (a file is on one machine)."""
    db = tmp_path / "memory.db"
    a_dir = _folder(tmp_path / "a", "notes", "The harbour bridge opens in spring.")
    a = _service(monkeypatch, tmp_path, "one", db)
    a.index_paths([a_dir])
    a.close()
    b = _service(monkeypatch, tmp_path, "two", db)
    try:
        assert b.roots() == [str(a_dir)]
        hit = b.search_outcome("harbour bridge", backend="keyword").results[0]
        assert hit.remote is False and hit.machine == ""  # its own file: no host name in results
    finally:
        b.close()


def test_the_migration_keeps_older_folders_as_everyones(tmp_path):
    db = tmp_path / "old.db"
    store = Store(db)
    store.add_root("/home/me/notes")
    store.close()
    conn = apsw.Connection(str(db))  # the library as the version before machines left it
    conn.execute("alter table roots drop column machine_id; alter table roots drop column machine_name;")
    conn.execute(f"pragma user_version = {SCHEMA_VERSION - 1}")
    conn.close()
    store = Store(db)
    try:
        assert store.root_machines() == [("/home/me/notes", "", "")]
        store.machine = ("id-1", "desktop")
        store.add_root("/home/me/notes")  # added again by a machine: claimed
        store.add_root("/home/me/other", machine=("id-2", "laptop"))
        assert store.root_machines() == [("/home/me/notes", "id-1", "desktop"), ("/home/me/other", "id-2", "laptop")]
        store.add_root("/home/me/other")  # another machine's folder keeps its machine
        assert store.root_machines()[1] == ("/home/me/other", "id-2", "laptop")
    finally:
        store.close()


def test_mcp_results_carry_their_machine(two_machines, tmp_path, monkeypatch, shared):
    from desktop_memory.mcp_server import tools
    from desktop_memory.mcp_server.library import Library

    _desk, _lap, _desk_dir, _lap_dir = two_machines
    monkeypatch.setenv("DESKTOP_MEMORY_CONFIG_DIR", str(tmp_path / "config-desktop"))
    from desktop_memory.config import EmbedderSettings

    lib = Library(Settings(machine_name="desktop", embedder=EmbedderSettings(kind="hash")), shared)
    try:
        text, out = lib.call(lambda svc: tools.search(lib, svc, "tomatoes sun water", top_k=3, backend="keyword",
                                                      filters=tools.Filters()))
    finally:
        lib.close()
    assert out.results[0].machine == "laptop"
    assert out.results[0].source == "notes/plan.md"  # relative to its library folder, the laptop's too
    assert "laptop: notes/plan.md" in text


def test_the_plain_cli_names_another_machines_result(two_machines, capsys):
    import argparse

    from desktop_memory.cli import subcommands

    desk, _lap, _desk_dir, lap_dir = two_machines
    args = argparse.Namespace(query="tomatoes sun water", backend="keyword", top_k=3, json=False, path_prefix=None,
                              path_glob=None, kind=[], since=None, until=None)
    assert subcommands.search(desk, args) == 0
    assert f" 1. laptop: {lap_dir / 'plan.md'}" in capsys.readouterr().out


def test_a_machine_renamed_in_settings_is_named_so_from_its_next_folder(two_machines):
    import dataclasses

    desk, lap, desk_dir, lap_dir = two_machines
    lap.apply_settings(dataclasses.replace(lap.settings, machine_name="travel laptop"))
    lap.index_paths([lap_dir])
    assert desk.other_machines() == {str(lap_dir): "travel laptop"}
    assert desk.roots() == [str(desk_dir)]


def test_a_context_names_the_machine_of_another_machines_passage(two_machines):
    """The prompt block a person pastes (window, `context`, MCP get_context) says whose file a passage is, as the
    result list does: "[Source: laptop: notes/plan.md …]" (it said "[Source: notes/plan.md …]", which reads like a
    file of this machine's)."""
    desk, _lap, _desk_dir, _lap_dir = two_machines
    theirs, _ = desk.context_outcome("tomatoes sun water", backend="keyword")
    ours, _ = desk.context_outcome("harbour bridge spring", backend="keyword")
    assert theirs.text.startswith("[Source: laptop: notes/plan.md")
    assert ours.text.startswith("[Source: notes/plan.md")
