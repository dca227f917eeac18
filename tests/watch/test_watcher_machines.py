"""Several machines, one library (issue 32 item 3), with the real watcher: each machine watches only its own
library folders, and a folder removed on another machine stops being watched on its own within seconds (the watcher
follows the folders stored in the library). Two config folders are two machines sharing one PostgreSQL + pgvector
library on a real server (tests/support/postgres.py)."""

from __future__ import annotations

from desktop_memory.config import Settings, WatchSettings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.service import MemoryService
from desktop_memory.watch import Watcher
from tests.support.postgres import pg_server, pg_url  # noqa: F401

from .conftest import Recorder, wait_for


def _machine(monkeypatch, tmp_path, name: str, library: str) -> MemoryService:
    monkeypatch.setenv("DESKTOP_MEMORY_CONFIG_DIR", str(tmp_path / f"config-{name}"))
    settings = Settings(machine_name=name, watch=WatchSettings(quiet_ms=100, max_wait_ms=1000))
    return MemoryService(settings, db_path=library, embedder=HashEmbedder())


def test_each_machine_watches_its_own_folders_and_follows_a_removal_elsewhere(monkeypatch, tmp_path,
                                                                              pg_url):  # noqa: F811
    desk_dir, lap_dir = tmp_path / "desk" / "notes", tmp_path / "lap" / "notes"
    for folder in (desk_dir, lap_dir):
        folder.mkdir(parents=True)
        (folder / "plan.md").write_text("# Plan\n\nsomething\n")
    desk, lap = (_machine(monkeypatch, tmp_path, "desktop", pg_url),
                 _machine(monkeypatch, tmp_path, "laptop", pg_url))
    watcher = Watcher(lap, on_update=Recorder())
    try:
        desk.index_paths([desk_dir])
        lap.index_paths([lap_dir])
        (desk_dir / "before.md").write_text("walrusword\n")  # changed while no watcher ran: the start's catch-up
        (lap_dir / "before.md").write_text("pelicanword\n")
        watcher.start()
        assert watcher.ready.wait(30)
        wait_for(lambda: lap.search_outcome("pelicanword", backend="keyword").results,
                 what="the laptop's catch-up of its own folder")
        # the desktop's folder is caught up by the desktop
        assert not lap.search_outcome("walrusword", backend="keyword").results
        assert list(watcher.folder_states()) == [str(lap_dir)]  # the desktop's folder is not read here
        (desk_dir / "new.md").write_text("zanzibarword\n")
        (lap_dir / "new.md").write_text("quokkaword\n")
        wait_for(lambda: lap.search_outcome("quokkaword", backend="keyword").results, what="the laptop's own change")
        # the desktop's file: its machine reads it
        assert not lap.search_outcome("zanzibarword", backend="keyword").results
        desk.remove_paths([str(lap_dir)])  # removed on the desktop
        wait_for(lambda: not watcher.folder_states(), timeout=20, what="the laptop to stop watching it")
    finally:
        watcher.stop()
        desk.close()
        lap.close()
