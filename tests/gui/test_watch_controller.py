"""The GUI's watch adapter under pytest-qt: real watcher, real folders and store; updates arrive on the UI thread."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QThread

from desktop_memory.config import Settings, WatchSettings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.gui.watch_controller import WatchController
from desktop_memory.service import MemoryService


def test_controller_delivers_updates_on_the_ui_thread_and_pauses(qtbot, tmp_path):
    a = tmp_path / "a"
    b = tmp_path / "b"
    for folder in (a, b):
        folder.mkdir()
        (folder / "seed.md").write_text("seed\n")
    svc = MemoryService(Settings(watch=WatchSettings(quiet_ms=100)), db_path=tmp_path / "m.db",
                        embedder=HashEmbedder())
    svc.index_paths([a, b])
    saved: list[tuple[bool, tuple[str, ...]]] = []
    ctl = WatchController(persist=lambda all_, folders: saved.append((all_, folders)))
    threads: list[bool] = []
    texts: list[str] = []
    ctl.updated.connect(lambda u: threads.append(QThread.currentThread() is QCoreApplication.instance().thread()))
    ctl.status_changed.connect(texts.append)
    try:
        ctl.start(svc)
        qtbot.waitUntil(lambda: ctl.ready and ctl.status_text() == "watching 2 folders", timeout=20000)
        with qtbot.waitSignal(ctl.updated, timeout=20000,
                              check_params_cb=lambda u: u.kind == "change" and u.indexed == 1):
            (a / "new.md").write_text("wombat burrow\n")
        assert [r.source for r in svc.search_outcome("wombat", backend="keyword").results] == [str(a / "new.md")]
        assert threads and all(threads), "every update is delivered on the UI thread"
        assert "watching 2 folders" in texts

        ctl.pause(str(a))
        assert saved[-1] == (False, (str(a),))
        assert ctl.is_paused(str(a)) and ctl.status_text() == "watching 1 folder"
        ctl.pause()
        assert ctl.paused_all and ctl.status_text() == "watching paused" and saved[-1][0] is True
        ctl.resume()
        assert saved[-1] == (False, ())
        qtbot.waitUntil(lambda: ctl.status_text() == "watching 2 folders", timeout=20000)
    finally:
        ctl.stop()
        svc.close()
    assert not ctl.running and ctl.status_text() == ""
