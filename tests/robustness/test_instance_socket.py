"""Issue 21 §2/§3: the single-instance socket cannot be squatted, and what arrives on it is checked.

The folder: with ``XDG_RUNTIME_DIR`` unset, the fallback ``$TMPDIR/desktop-memory-<uid>`` is used only when it is
ours with mode 0700 and not a symlink; one another account made first (we are root here, so we can make it for
"nobody") turns single instance off with a logged reason. The messages: real Unix sockets to a real QLocalServer
(``InstanceServer``), each hostile line answered ``error: …`` and never emitted; a real ``DesktopShell`` takes
what passes without a traceback.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_memory.gui import single_instance
from desktop_memory.gui.single_instance import BadRequest, parse_request

NOBODY = 65534


@pytest.fixture
def no_xdg(monkeypatch) -> Iterator[Path]:
    """XDG_RUNTIME_DIR unset and the temp folder a fresh, sticky, world-writable one (like /tmp; short, as a
    Unix socket's path must be)."""
    tmp = Path(tempfile.mkdtemp(prefix="dmi-", dir="/tmp"))
    os.chmod(tmp, 0o1777)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    yield tmp / f"desktop-memory-{os.getuid()}"
    shutil.rmtree(tmp, ignore_errors=True)


def test_fallback_folder_is_created_private(no_xdg, tmp_path):
    name = single_instance.endpoint(tmp_path / "x.db")
    assert name is not None and Path(name).parent == no_xdg
    st = os.lstat(no_xdg)
    assert stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.getuid()


@pytest.mark.skipif(os.geteuid() != 0, reason="making a folder for another account needs root")
def test_a_folder_squatted_by_another_account_is_refused(no_xdg, tmp_path, caplog):
    no_xdg.mkdir(mode=0o777)
    os.chmod(no_xdg, 0o777)
    os.chown(no_xdg, NOBODY, NOBODY)
    with caplog.at_level(logging.WARNING):
        assert single_instance.endpoint(tmp_path / "x.db") is None
        assert single_instance.hand_off(tmp_path / "x.db", {"cmd": "show", "paths": ["/home/private"]}) is False
    assert f"belongs to another account (uid {NOBODY})" in caplog.text
    assert "single instance off" in caplog.text
    assert os.listdir(no_xdg) == [], "nothing was sent into (or bound in) someone else's folder"


@pytest.mark.parametrize("make, why", [
    (lambda p, _t: (p.mkdir(), os.chmod(p, 0o777)), "is open to other accounts (mode 777)"),
    (lambda p, _t: (p.mkdir(), os.chmod(p, 0o750)), "is open to other accounts (mode 750)"),
    (lambda p, t: ((t / "mine").mkdir(mode=0o700), os.symlink(t / "mine", p)), "is a symlink"),
    (lambda p, _t: p.write_text("x"), "is not a folder"),
])
def test_an_unsafe_fallback_is_refused_with_its_reason(no_xdg, tmp_path, caplog, make, why):
    make(no_xdg, tmp_path)
    with caplog.at_level(logging.WARNING):
        assert single_instance.endpoint(tmp_path / "x.db") is None
    assert why in caplog.text


def test_xdg_runtime_dir_is_used_only_when_private(no_xdg, tmp_path, monkeypatch):
    good = tmp_path / "run"
    good.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(good))
    assert Path(single_instance.endpoint(tmp_path / "x.db") or "").parent == good
    os.chmod(good, 0o777)
    assert Path(single_instance.endpoint(tmp_path / "x.db") or "").parent == no_xdg, "an open one: the fallback"


def test_make_server_is_none_without_a_private_folder(no_xdg, tmp_path, qapp):
    no_xdg.mkdir()
    os.chmod(no_xdg, 0o777)
    assert single_instance.make_server(tmp_path / "x.db") is None


# ---------------------------------------------------------------- the schema

HOSTILE = {
    "paths an int": b'{"cmd":"show","paths":5}',
    "paths a string": b'{"cmd":"show","paths":"xyz"}',
    "paths a dict": b'{"paths":{"/nonexistent":1}}',
    "paths a dict with cmd": b'{"cmd":"show","paths":{"/nonexistent":1}}',
    "relative paths": b'{"cmd":"show","paths":["x","y"]}',
    "a path not a string": b'{"cmd":"show","paths":[["/a"]]}',
    "unknown cmd": b'{"cmd":"rm -rf"}',
    "cmd not a string": b'{"cmd":1}',
    "extra field": b'{"cmd":"quick","exec":"x"}',
    "quick with paths": b'{"cmd":"quick","paths":["/a"]}',
    "too many paths": b'{"cmd":"show","paths":[' + b",".join([b'"/a"'] * 1001) + b"]}",
    "deep": b"[" * 100_000 + b"]" * 100_000,
    "deep inside": b'{"cmd":"show","paths":[' + b"[" * 50 + b"]" * 50 + b"]}",
    "not json": b"not json",
    "not utf-8": b'{"cmd":"\xff"}',
    "a list": b'["show"]',
    "nul in path": b'{"cmd":"show","paths":["/a\\u0000b"]}',
    "surrogate in path": b'{"cmd":"show","paths":["/a\\ud800"]}',
}


@pytest.mark.parametrize("key", list(HOSTILE))
def test_hostile_requests_are_refused_by_the_schema(key):
    with pytest.raises(BadRequest):
        parse_request(HOSTILE[key])


def test_good_requests_pass_the_schema():
    assert parse_request(b'{"cmd":"quick"}') == single_instance.Request("quick")
    assert parse_request(b'{"cmd":"show","paths":["/a/[b]","/c{d}"]}').paths == ("/a/[b]", "/c{d}")
    assert parse_request(b'{"cmd":"show"}').paths == ()


def _send(name: str, data: bytes, out: list[bytes]) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
        c.settimeout(10)
        c.connect(name)
        c.sendall(data + b"\n")
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = c.recv(256)
            if not chunk:
                break
            reply += chunk
        out.append(reply)


def test_the_running_server_answers_every_hostile_line_and_emits_none(qtbot, no_xdg, tmp_path, caplog):
    server = single_instance.make_server(tmp_path / "x.db")
    assert server is not None
    got: list[dict] = []
    server.message.connect(got.append)
    name = server.name
    replies: list[bytes] = []
    lines = [*HOSTILE.values(), b'{"cmd":"show","paths":["/abs/folder"]}']
    with caplog.at_level(logging.WARNING):
        for data in lines:
            before = len(replies)
            t = threading.Thread(target=_send, args=(name, data, replies))
            t.start()
            qtbot.waitUntil(lambda before=before: len(replies) == before + 1, timeout=30000)
            t.join()
    server.close()
    assert all(r.startswith(b"error: ") for r in replies[:-1]), replies
    assert replies[-1] == b"ok\n"
    assert got == [{"cmd": "show", "paths": ["/abs/folder"]}], "only the valid request reached the app"
    assert caplog.text.count("single instance: refused a request") == len(HOSTILE), "logged once each"
    assert "Traceback" not in caplog.text and "RecursionError" not in caplog.text


def test_the_shell_takes_any_message_without_a_traceback(qtbot, qapp):
    """Even a message that skipped the schema: the shell reads only a list of absolute paths."""
    from PySide6.QtCore import Signal
    from PySide6.QtWidgets import QWidget

    from desktop_memory.config import Settings
    from desktop_memory.gui.desktop_integration import DesktopShell

    class Window(QWidget):
        quick_search_requested = Signal()  # File ▸ Quick search (the shell connects it)

        def __init__(self) -> None:
            super().__init__()
            self.settings = Settings()
            self.added: list[list[str]] = []

        def add_paths(self, paths: list[str]) -> None:
            self.added.append(paths)

    w = Window()
    qtbot.addWidget(w)
    shell = DesktopShell(qapp, w, tray=False)
    for msg in ({"cmd": "show", "paths": 5}, {"cmd": "show", "paths": "xyz"}, {"cmd": "show", "paths": {"/n": 1}},
                {"cmd": "show", "paths": ["rel", 3, "/abs"]}, {"cmd": None}, {}):
        shell.handle(msg)
    w.removeEventFilter(shell)  # closing this stand-in window must not quit the test's application
    assert w.added == [["/abs"]]
