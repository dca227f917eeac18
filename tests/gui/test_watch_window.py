"""Live folders in the real window (pytest-qt, real service and store, fast test embedder): the status bar says
"watching N folders", a file written into a library folder appears in the Library and in search, each folder
shows its watch state, and pausing from the Library is kept in settings."""

from __future__ import annotations

import tomllib

from desktop_memory.config import Settings, settings_path


def _window_with_watch(make_window, factory, qtbot):
    w = make_window(factory, Settings())
    qtbot.waitUntil(lambda: w.watch.ready and w.watch.watching_count() == 1, timeout=20000)
    return w


def test_window_watches_its_library(make_window, hash_factory, qtbot, tmp_path):
    root = tmp_path / "notes"
    root.mkdir()
    (root / "seed.md").write_text("# Seed\n\nseed text\n")
    pre = hash_factory(Settings())  # the library already holds the folder (the default database)
    pre.index_paths([root])
    pre.close()
    w = _window_with_watch(make_window, hash_factory, qtbot)
    qtbot.waitUntil(lambda: "watching 1 folder" in _status_texts(w), timeout=10000)
    messages: list[str] = []
    w.statusBar().messageChanged.connect(messages.append)

    (root / "fresh.md").write_text("# Fresh\n\nplatypus paddle\n")
    qtbot.waitUntil(lambda: any("fresh.md" in r for r in w.library.row_texts()), timeout=20000)
    qtbot.waitUntil(lambda: any(m.startswith("indexed 1: notes/fresh.md") for m in messages), timeout=5000)
    assert [r.source for r in w.svc.search_outcome("platypus", backend="keyword").results] == [str(root / "fresh.md")]
    folder_status = w.library.model.index(0, 1).data()
    assert folder_status.endswith("· watching"), folder_status

    w.library.watch_pause_requested.emit(str(root), True)  # what the Library's context menu sends
    qtbot.waitUntil(lambda: w.library.model.index(0, 1).data().endswith("· paused"), timeout=5000)
    saved = tomllib.loads(settings_path().read_text())
    assert saved["watch"]["paused"] == [str(root)]
    assert "watching 0 folders" in _status_texts(w)
    w.act_pause_watching.trigger()  # Library → Pause watching folders: all
    assert w.watch.paused_all and tomllib.loads(settings_path().read_text())["watch"]["paused_all"] is True
    w.act_pause_watching.trigger()
    qtbot.waitUntil(lambda: "watching 1 folder" in _status_texts(w), timeout=10000)


def _status_texts(w) -> str:
    from PySide6.QtWidgets import QLabel

    return " | ".join(lbl.text() for lbl in w.statusBar().findChildren(QLabel))
