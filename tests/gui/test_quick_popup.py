"""Issue 15 §2: the quick-search popup, the tray's close-to-tray setting, and single-instance handoff.

Real parts: the real MainWindow and MemoryService (hashing embedder) on real FastAPI docs, the real QLocalServer,
and a real second `desktop-memory-gui --quick` process that reaches the running one.
"""

from __future__ import annotations

import gc
import os
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QSystemTrayIcon

from desktop_memory.config import Settings
from desktop_memory.context.tokens import estimate_tokens
from desktop_memory.gui import single_instance
from desktop_memory.gui.desktop_integration import DesktopShell, install_shell
from desktop_memory.settings_file import load_settings

from .helpers import drop, search, wait_job

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _collect_on_the_ui_thread():
    """Qt wrappers left by earlier tests (windows, shells, popups) are freed here, on the UI thread, not by a cyclic
    GC pass that happens to run on a worker thread (the crash tasks.py describes)."""
    gc.collect()
    yield
    gc.collect()


def _indexed_window(qtbot, make_window, hash_factory, docs_dir, settings=None):
    w = make_window(hash_factory, settings or Settings(db_path=str(docs_dir.parent / "memory.db")))
    drop(w, [docs_dir])
    wait_job(qtbot, w)
    return w


def _type(qtbot, popup, text):
    with qtbot.waitSignal(popup.results_shown, timeout=15000, check_params_cb=lambda q: q == text):
        qtbot.keyClicks(popup.box, text)


def test_popup_types_picks_includes_and_copies(qtbot, make_window, hash_factory, docs_dir):
    w = _indexed_window(qtbot, make_window, hash_factory, docs_dir)
    shell = DesktopShell(QApplication.instance(), w, tray=False)
    popup = shell.show_quick()
    qtbot.waitUntil(popup.isVisible)
    assert popup.windowFlags() & Qt.WindowType.FramelessWindowHint
    _type(qtbot, popup, "async await")
    n = popup.model.rowCount()
    assert n >= 3 and popup.current_row() == 0
    first, second = popup.model.result(0), popup.model.result(1)
    assert "async" in first.source
    for i in range(n):  # the hash embedder's cosines are meaningless, so most hits are weak (left out): include all
        popup.model.set_included(i, True)

    qtbot.keyClick(popup.box, Qt.Key.Key_Down)  # ↓ picks the next result, the list takes the focus
    assert popup.current_row() == 1 and popup.focusWidget() is popup.view
    qtbot.keyClick(popup.view, Qt.Key.Key_Space)  # Space leaves it out of the context block
    assert not popup.model.is_included(1)
    qtbot.waitUntil(lambda: not popup.context.pending and "in the block" in popup.status.text(), timeout=10000)
    qtbot.keyClick(popup.view, Qt.Key.Key_Up)
    qtbot.keyClick(popup.view, Qt.Key.Key_Up)  # above the first row: back to the query
    assert popup.current_row() == 0 and popup.focusWidget() is popup.box

    with qtbot.waitSignal(popup.copied, timeout=10000):
        qtbot.keyClick(popup.box, Qt.Key.Key_Return)  # Enter: the context block, then the popup hides
    block = QApplication.clipboard().text()
    expected = w.svc.build_context([r for i, r in enumerate(popup.model.results()) if i != 1],
                                   w.settings.context.budget_tokens)
    assert block == expected.text and block.startswith("[Source: ")
    assert second.chunk_id not in {i.chunk_id for i in expected.items}
    assert not popup.isVisible()

    shell.show_quick()
    assert popup.box.text() == "async await" and popup.box.selectedText() == "async await"
    qtbot.keyClick(popup.box, Qt.Key.Key_Down)
    qtbot.keyClick(popup.view, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)  # Shift+Enter: the passage
    assert QApplication.clipboard().text() == second.text and not popup.isVisible()

    shell.show_quick()
    qtbot.keyClick(popup.view, Qt.Key.Key_A)  # typing on the list goes back to the query
    assert popup.focusWidget() is popup.box and popup.box.text().endswith("a")
    qtbot.keyClick(popup.box, Qt.Key.Key_Escape)
    assert not popup.isVisible() and w.svc is not None, "Esc only hides the popup"


def _footer(popup) -> tuple[int, int]:
    """(passages, tokens) as the popup's footer states them."""
    m = re.search(r"(\d+) passages? in the block · ([\d,]+) / ", popup.status.text())
    assert m, popup.status.text()
    return int(m.group(1)), int(m.group(2).replace(",", ""))


def _copy(qtbot, popup) -> str:
    with qtbot.waitSignal(popup.copied, timeout=10000):
        qtbot.keyClick(popup.box, Qt.Key.Key_Return)
    return QApplication.clipboard().text()


def test_footer_says_what_enter_copies_also_after_excluding(qtbot, make_window, hash_factory, docs_dir):
    """Old footer: "10 in the context block · 865 tokens" (the ticked results) while Enter copied 5 passages."""
    w = _indexed_window(qtbot, make_window, hash_factory, docs_dir)
    w.context_panel.budget.setValue(700)  # a budget that fits some passages, not all
    shell = DesktopShell(QApplication.instance(), w, tray=False)
    popup = shell.show_quick()
    _type(qtbot, popup, "python types")
    for i in range(popup.model.rowCount()):
        popup.model.set_included(i, True)
    for exclude in (None, 0):
        if exclude is not None:
            shell.show_quick()
            popup.toggle(exclude)
        qtbot.waitUntil(lambda: not popup.context.pending and "in the block" in popup.status.text(), timeout=10000)
        passages, tokens = _footer(popup)
        assert "did not fit" in popup.status.text() and passages < popup.model.rowCount()
        block = _copy(qtbot, popup)
        # passages of one file that overlap share one [Source: ...] block (context/packer.py)
        headers = {i.header for i in popup.context.report.items}
        assert block.count("[Source: ") == len(headers) and len(popup.context.report.items) == passages
        assert estimate_tokens(block) == tokens
    shell.close()


def test_a_budget_that_fits_nothing_says_so_and_raises(qtbot, make_window, hash_factory, docs_dir):
    w = _indexed_window(qtbot, make_window, hash_factory, docs_dir)
    w.context_panel.budget.setValue(16)  # the schema's smallest budget: no passage fits
    assert w.context_panel.budget.value() == 16
    shell = DesktopShell(QApplication.instance(), w, tray=False)
    popup = shell.show_quick()
    _type(qtbot, popup, "python types")
    popup.model.set_included(0, True)
    qtbot.waitUntil(lambda: not popup.context.pending and popup.raise_btn.isVisibleTo(popup), timeout=10000)
    assert "Nothing fits the 16-token budget" in popup.status.text()
    assert "weak" not in popup.status.text().lower()
    popup.raise_btn.click()
    qtbot.waitUntil(lambda: not popup.context.pending and "in the block" in popup.status.text(), timeout=10000)
    assert _footer(popup)[0] >= 1 and not popup.raise_btn.isVisibleTo(popup)
    assert w.context_panel.budget.value() == popup.context.budget > 16  # the window keeps the raised budget
    # the window's own panel says the same and offers the same fix
    popup.hide()
    with qtbot.waitSignal(w.context_ready, timeout=10000):
        search(qtbot, w, "python types")
    w.results_model.set_included(0, True)
    panel = w.context_panel
    panel.budget.setValue(16)
    qtbot.waitUntil(lambda: panel.raise_btn.isVisibleTo(w), timeout=10000)
    assert "Nothing fits the 16-token budget" in panel.block.placeholderText() and not panel.copy_btn.isEnabled()
    panel.raise_btn.click()
    qtbot.waitUntil(lambda: panel.report is not None and bool(panel.report.items), timeout=10000)
    assert panel.copy_btn.isEnabled() and not panel.raise_btn.isVisibleTo(w)
    shell.close()


def test_enter_right_after_typing_copies_that_querys_block(qtbot, make_window, hash_factory, docs_dir):
    w = _indexed_window(qtbot, make_window, hash_factory, docs_dir)
    popup = DesktopShell(QApplication.instance(), w, tray=False).show_quick()
    QApplication.clipboard().setText("old")
    qtbot.keyClicks(popup.box, "environment variables")
    with qtbot.waitSignal(popup.copied, timeout=15000):
        qtbot.keyClick(popup.box, Qt.Key.Key_Return)  # before the debounce fired
    assert "environment-variables.md" in QApplication.clipboard().text()


def test_close_to_tray_keeps_the_app_running_only_when_chosen(qtbot, make_window, hash_factory, monkeypatch,
                                                              tmp_path):
    monkeypatch.setattr(QSystemTrayIcon, "isSystemTrayAvailable", staticmethod(lambda: True))
    quits = []
    app = QApplication.instance()
    monkeypatch.setattr(app, "quit", lambda: quits.append(1))
    w = make_window(hash_factory, Settings(db_path=str(tmp_path / "m.db")))
    shell = DesktopShell(app, w)
    assert shell.tray is not None and not shell.tray.act_keep.isChecked(), "off by default"
    assert [a.text() for a in shell.tray.menu.actions() if a.text()][:2] == ["&Quick search", "&Show window"]
    shell.tray.act_keep.setChecked(True)  # the tray menu's checkbox is the setting, saved at once
    assert load_settings().tray.close_to_tray is True
    w.close()
    assert not w.isVisible() and w.svc is not None and not w._closing, "hidden in the tray, still running"
    shell.tray.show_requested.emit()
    assert w.isVisible()
    shell.tray.quit_requested.emit()
    qtbot.waitUntil(lambda: bool(quits))
    assert w._closing and w.svc is None


def test_a_second_process_hands_quick_to_the_running_app(qtbot, make_window, hash_factory, docs_dir):
    """The real `desktop-memory-gui --quick` in a second process opens the popup here and exits."""
    w = _indexed_window(qtbot, make_window, hash_factory, docs_dir)
    shell = install_shell(QApplication.instance(), w)
    assert shell.server is not None
    got = []
    shell.server.message.connect(got.append)
    env = dict(os.environ, PYTHONPATH=str(REPO), QT_QPA_PLATFORM="offscreen")
    db = str(w.settings.resolved_db_path())
    proc = subprocess.Popen([sys.executable, "-m", "desktop_memory.gui.app", "--quick", "--db", db], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        qtbot.waitUntil(lambda: shell.popup is not None and shell.popup.isVisible() and proc.poll() is not None,
                        timeout=20000)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, proc.communicate()[1]
    assert got == [{"cmd": "quick"}]

    new = docs_dir.parent / "more"  # outside the library (whose folders the app watches): only the handoff indexes it
    new.mkdir()
    (new / "note.md").write_text("# Zebra\n\nZebras cross rivers at dawn.\n")
    proc = subprocess.Popen([sys.executable, "-m", "desktop_memory.gui.app", "--db", db, str(new)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:  # this thread must keep serving while the second process waits for the answer
        qtbot.waitUntil(lambda: proc.poll() is not None, timeout=20000)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, proc.communicate()[1]
    assert got[-1] == {"cmd": "show", "paths": [str(new)]}
    wait_job(qtbot, w)
    # the folder lies inside a watched library folder: the watch may have indexed the note before the job ran
    s = w.last_summary
    assert s is not None and s.indexed + s.unchanged == 1 and not s.failed, "the running app indexed the new folder"
    assert [o.path for o in s.outcomes] == [str(new / "note.md")]
    shell.close()


def test_stale_socket_is_replaced_and_garbage_is_refused(qtbot, tmp_path):
    db = tmp_path / "x.db"
    name = single_instance.endpoint(db)
    if os.name != "nt":  # a crash leaves the socket file behind
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(name)
        s.close()
        assert Path(name).exists()
        assert not single_instance.hand_off(db, {"cmd": "quick"}), "nobody listens: start a new instance"
    server = single_instance.make_server(db)
    assert server is not None, "the stale endpoint was taken over"
    got, answers = [], []
    server.message.connect(got.append)
    # the sender blocks on its socket, so it runs on a thread while this (the app's) thread serves
    t = threading.Thread(target=lambda: answers.append(single_instance.hand_off(db, {"cmd": "quick"})))
    t.start()
    qtbot.waitUntil(lambda: got == [{"cmd": "quick"}] and answers == [True], timeout=10000)
    t.join()
    if os.name != "nt":
        assert os.stat(name).st_mode & 0o077 == 0, "only its owner may talk to the app"

        def garbage() -> None:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
                c.settimeout(5)
                c.connect(name)
                c.sendall(b"not json\n")
                answers.append(c.recv(16))

        t = threading.Thread(target=garbage)
        t.start()
        qtbot.waitUntil(lambda: len(answers) == 2, timeout=10000)
        t.join()
        assert answers[1].startswith(b"error") and got == [{"cmd": "quick"}]
    server.close()


def test_tray_pause_watching_drives_the_watch_controller(qtbot, make_window, hash_factory, monkeypatch, tmp_path):
    from desktop_memory.gui.watch_controller import WatchController

    monkeypatch.setattr(QSystemTrayIcon, "isSystemTrayAvailable", staticmethod(lambda: True))
    w = make_window(hash_factory, Settings(db_path=str(tmp_path / "m.db")))
    controller = w.watch  # the window watches its folders (gui/watch_controller.py, installed by MainWindow)
    assert isinstance(controller, WatchController)
    calls = []
    monkeypatch.setattr(controller, "set_paused", lambda on, folder=None: calls.append(on))
    shell = DesktopShell(QApplication.instance(), w)
    assert shell.tray.act_pause is not None and "Pause watching" in shell.tray.act_pause.text()
    shell.tray.act_pause.trigger()
    shell.tray.act_pause.trigger()
    assert calls == [True, False]
    shell.close()


def test_footer_matches_the_clipboard_while_an_embedding_runs(qtbot, make_window, docs_dir):
    """The same truth while a long embedding runs (keyword results meanwhile, re-packs on a busy machine)."""
    import time

    from desktop_memory.config import EmbedderSettings
    from desktop_memory.embed.hashing import HashEmbedder
    from desktop_memory.service import MemoryService

    from .conftest import FASTAPI

    class SlowEmbedder(HashEmbedder):
        def embed_documents(self, texts):
            time.sleep(0.05 * len(texts))  # deliberate: a slow worker (simulated work), not a wait for a condition
            return super().embed_documents(texts)

    s = Settings(db_path=str(docs_dir.parent / "memory.db"), embedder=EmbedderSettings(batch_size=8))
    w = make_window(lambda st: MemoryService(st, embedder=SlowEmbedder(64)), settings=s)
    w.context_panel.budget.setValue(600)
    drop(w, [FASTAPI / "advanced"])
    qtbot.waitUntil(lambda: w.is_indexing() and "semantic:" in w.progress.detail.text(), timeout=30000)
    shell = DesktopShell(QApplication.instance(), w, tray=False)
    popup = shell.show_quick()
    _type(qtbot, popup, "websocket")
    for i in range(popup.model.rowCount()):
        popup.model.set_included(i, True)
    popup.toggle(0)
    qtbot.waitUntil(lambda: not popup.context.pending and "in the block" in popup.status.text(), timeout=10000)
    passages, tokens = _footer(popup)
    block = _copy(qtbot, popup)
    assert w.is_indexing(), "the embedding finished too fast for this test to mean anything"
    assert block.count("[Source: ") == passages >= 1 and estimate_tokens(block) == tokens
    shell.close()
    w.cancel_job()
    wait_job(qtbot, w)
