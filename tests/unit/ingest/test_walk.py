"""Folder walking on real trees: skip rules with reasons, symlinks, special files, permissions, order."""

from __future__ import annotations

import json
import os
import signal
import socket
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from desktop_memory.config import IngestSettings
from desktop_memory.ingest.walk import WalkEntry, walk_paths

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
NOBODY = 65534


@pytest.fixture(autouse=True)
def _no_hang():
    """A FIFO opened by mistake would block forever: turn that into a failure after 20 s."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def boom(*_):
        raise TimeoutError("walk hung")

    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(20)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def rel(entries: list[WalkEntry], root: Path) -> dict[str, str | None]:
    return {os.path.relpath(e.path, root): e.skip_reason for e in entries}


def touch(p: Path, data: bytes = b"hello\n") -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    return p


def run_as_nobody(fn: Callable[[], object]) -> object:
    """Run ``fn`` in a forked child that dropped root, and return its JSON-able result.

    Tests run as root, and root ignores permission bits; a child with uid 'nobody' sees them like a user would.
    """
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(r)
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            payload = json.dumps({"ok": fn()})
        except BaseException as exc:  # report, never fall back into pytest
            payload = json.dumps({"error": repr(exc)})
        os.write(w, payload.encode())
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as fh:
        data = json.loads(fh.read() or '{"error": "no output"}')
    os.waitpid(pid, 0)
    assert "error" not in data, data
    return data["ok"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    touch(root / "notes" / "a.md")
    touch(root / "notes" / "b.txt")
    touch(root / "notes" / "sub" / "c.py")
    touch(root / "notes" / ".hidden.md")
    touch(root / ".secret" / "x.md")
    touch(root / ".git" / "HEAD")
    touch(root / "node_modules" / "pkg" / "index.js")
    touch(root / "__pycache__" / "m.cpython-311.pyc")
    touch(root / "venv" / "pyvenv.cfg")
    touch(root / "venv" / "lib" / "site.py")
    touch(root / "env" / "plain.txt")  # "env" without pyvenv.cfg is an ordinary folder
    touch(root / "myenv" / "pyvenv.cfg")  # any folder with pyvenv.cfg is a virtualenv
    touch(root / "rust" / "Cargo.toml")
    touch(root / "rust" / "target" / "debug.txt")
    touch(root / "java" / "target" / "kept.txt")  # no Cargo.toml beside: kept
    touch(root / "build" / "out.txt")
    touch(root / "photo.png", b"\x89PNG\r\n")
    touch(root / "empty.txt", b"")
    touch(root / "résumé-日本.md")
    touch(root / "big.log", b"x" * 5000)
    os.mkfifo(root / "pipe")
    os.symlink(root / "nowhere", root / "dangling")
    os.symlink(root / "notes" / "a.md", root / "link-to-a.md")
    return root


def test_tree_skip_reasons(tree: Path) -> None:
    settings = IngestSettings(max_file_mb=0.004)  # ~4 KB: big.log is over the cap
    got = rel(list(walk_paths([tree], settings)), tree)
    assert got == {
        ".git": "ignored folder (.git)",
        ".secret": "hidden folder",
        "__pycache__": "ignored folder (__pycache__)",
        "big.log": "too large: 0.0 MB (limit 0.004 MB)",
        "build": "ignored folder (build)",
        "dangling": "broken symlink",
        "empty.txt": None,  # the reader reports "empty file"; the walker only stats
        "env/plain.txt": None,
        "java/target/kept.txt": None,
        "link-to-a.md": "symlink (not followed)",
        "myenv": "ignored folder (Python virtual environment)",
        "node_modules": "ignored folder (node_modules)",
        "notes/.hidden.md": "hidden file",
        "notes/a.md": None,
        "notes/b.txt": None,
        "notes/sub/c.py": None,
        "photo.png": "binary file (.png)",
        "pipe": "not a regular file (FIFO)",
        "résumé-日本.md": None,
        "rust/Cargo.toml": None,
        "rust/target": "ignored folder (Rust build output)",
        "venv": "ignored folder (Python virtual environment)",
    }


def test_entry_fields_and_dir_flags(tree: Path) -> None:
    entries = {os.path.relpath(e.path, tree): e for e in walk_paths([tree], IngestSettings())}
    a = entries["notes/a.md"]
    assert os.path.isabs(a.path) and a.size == 6 and a.mtime == pytest.approx(os.stat(a.path).st_mtime)
    assert entries[".git"].is_dir and entries["node_modules"].is_dir
    assert not entries["photo.png"].is_dir
    assert entries["big.log"].skip_reason is None  # default 50 MB cap


def test_order_is_sorted_depth_first_and_deterministic(tree: Path) -> None:
    first = [e.path for e in walk_paths([tree], IngestSettings())]
    second = [e.path for e in walk_paths([str(tree)], IngestSettings())]
    assert first == second
    names = [os.path.relpath(p, tree) for p in first]
    assert names.index("notes/a.md") < names.index("notes/sub/c.py") < names.index("photo.png")


def test_explicit_paths_are_never_hidden(tree: Path) -> None:
    named = [tree / "notes" / ".hidden.md", tree / ".git", tree / ".secret"]
    got = rel(list(walk_paths(named, IngestSettings())), tree)
    assert got == {"notes/.hidden.md": None, ".git/HEAD": None, ".secret/x.md": None}


def test_not_found_and_broken_explicit(tmp_path: Path) -> None:
    os.symlink(tmp_path / "gone", tmp_path / "link")
    entries = list(walk_paths([tmp_path / "missing", tmp_path / "link"], IngestSettings()))
    assert [e.skip_reason for e in entries] == ["not found", "broken symlink"]
    assert entries[0].path == str(tmp_path / "missing")


def test_relative_path_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    touch(tmp_path / "d" / "f.md")
    monkeypatch.chdir(tmp_path)
    [e] = list(walk_paths(["d/../d"], IngestSettings()))
    assert e.path == str(tmp_path / "d" / "f.md")


def test_follow_symlinks_with_loop_and_duplicates(tmp_path: Path) -> None:
    root = tmp_path / "root"
    touch(root / "real" / "doc.md")
    os.symlink(root, root / "real" / "loop")  # points back up: a cycle
    os.symlink(root / "real", root / "zalias")  # a second way into the same folder
    outside = touch(tmp_path / "outside" / "o.md").parent
    os.symlink(outside, root / "ext")
    got = rel(list(walk_paths([root], IngestSettings(follow_symlinks=True))), root)
    assert got == {
        "ext/o.md": None,  # path through the link, not resolved
        "real/doc.md": None,
        "real/loop": "symlink loop",
        "zalias": f"already included as {root / 'real'}",
    }
    not_followed = rel(list(walk_paths([root], IngestSettings())), root)
    assert not_followed["ext"] == "symlink (not followed)"
    assert not_followed["real/loop"] == "symlink (not followed)"


def test_self_loop_symlink_is_reported(tmp_path: Path) -> None:
    os.symlink(tmp_path / "self", tmp_path / "self")
    [e] = list(walk_paths([tmp_path], IngestSettings(follow_symlinks=True)))
    assert e.skip_reason in ("symlink loop", "broken symlink")


def test_extra_ignore_patterns(tree: Path) -> None:
    """gitignore syntax, relative to the indexed folder (ingest/ignore.py; more in tests/badinput)."""
    settings = IngestSettings(extra_ignore=("*.txt", "sub", "/a.md"))
    got = rel(list(walk_paths([tree / "notes"], settings)), tree)
    assert got == {
        "notes/.hidden.md": "hidden file",
        "notes/a.md": "ignored by your pattern: /a.md",
        "notes/b.txt": "ignored by your pattern: *.txt",
        "notes/sub": "ignored by your pattern: sub",
    }


def test_socket_and_device(tmp_path: Path) -> None:
    sock_path = tmp_path / "s.sock"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.bind(str(sock_path))
        entries = list(walk_paths([tmp_path, "/dev/null"], IngestSettings()))
    finally:
        s.close()
    assert [e.skip_reason for e in entries] == ["not a regular file (socket)", "not a regular file (character device)"]


def test_undecodable_file_name(tmp_path: Path) -> None:
    bad = os.path.join(os.fsencode(tmp_path), b"caf\xe9.md")
    with open(bad, "wb") as fh:
        fh.write(b"x")
    [e] = list(walk_paths([tmp_path], IngestSettings()))
    assert e.skip_reason == "file name is not valid text (undecodable bytes)"


def test_very_long_path(tmp_path: Path) -> None:
    deep = tmp_path
    for i in range(12):
        deep = deep / (f"{i:02d}-" + "d" * 100)
    f = touch(deep / ("f" * 200 + ".md"))
    assert len(str(f)) > 1400
    [e] = list(walk_paths([tmp_path], IngestSettings()))
    assert e.path == str(f) and e.skip_reason is None


def test_unreadable_dir_is_graceful_even_as_root(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    touch(locked / "in.md")
    locked.chmod(0)
    try:
        entries = list(walk_paths([tmp_path], IngestSettings()))
    finally:
        locked.chmod(0o755)
    # root reads through mode 000; anyone else gets one "permission denied" entry for the folder
    expected = [(str(locked / "in.md"), None)] if IS_ROOT else [(str(locked), "permission denied")]
    assert [(e.path, e.skip_reason) for e in entries] == expected


@pytest.mark.skipif(not IS_ROOT or not hasattr(os, "fork"), reason="needs root to switch to an unprivileged uid")
def test_permission_denied_as_unprivileged_user() -> None:
    base = Path(tempfile.mkdtemp(prefix="dm-walk-"))
    try:
        base.chmod(0o755)
        touch(base / "ok.md").chmod(0o644)
        touch(base / "secret.md").chmod(0o000)
        (base / "closed").mkdir(mode=0o755)
        touch(base / "closed" / "inside.md")
        (base / "closed").chmod(0o000)

        def walk() -> list:
            return [(os.path.basename(e.path), e.skip_reason, e.is_dir)
                    for e in walk_paths([base], IngestSettings())]

        got = run_as_nobody(walk)
        assert got == [
            ["closed", "permission denied", True],
            ["ok.md", None, False],
            ["secret.md", "permission denied", False],
        ]
    finally:
        (base / "closed").chmod(0o755)
        import shutil

        shutil.rmtree(base)


def test_bad_entries_never_raise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder that vanishes or errors while listing becomes one entry, the walk goes on."""
    touch(tmp_path / "a" / "x.md")
    touch(tmp_path / "b" / "y.md")
    real_scandir = os.scandir

    def flaky(path):
        if str(path).endswith("/a"):
            raise OSError(5, "Input/output error")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", flaky)
    got = rel(list(walk_paths([tmp_path], IngestSettings())), tmp_path)
    assert got == {"a": "cannot access: Input/output error", "b/y.md": None}
