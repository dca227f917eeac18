"""Issue 30 item 6: one bad entry in a watch batch costs only itself; `watch` never creates a library, and under a
stored pause it says so. Real folders, the real store, a real watchdog observer (and the real CLI for the last
two)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.service import MemoryService
from desktop_memory.watch import watcher as watcher_mod
from desktop_memory.watch.update import CHANGE
from tests.support.cli import finish, run_cli, spawn_cli, write_settings

from .conftest import keyword_hits, make_tree, wait_for


def test_a_symlink_loop_in_a_batch_is_skipped_with_its_reason_and_the_rest_is_indexed(tmp_path, svc, start_watcher):
    root = make_tree(tmp_path / "notes", {"a.md": "alpha"})
    svc.index_paths([root])
    _, rec = start_watcher()
    os.symlink("lb", root / "la")  # la -> lb -> la, made in the same burst as a real edit
    os.symlink("la", root / "lb")
    (root / "b.md").write_text("gooseberry fool\n", encoding="utf-8")
    wait_for(lambda: keyword_hits(svc, "gooseberry") == [str(root / "b.md")], what="the real edit indexed")
    wait_for(lambda: any("la" in u.message for u in rec.of(CHANGE)), what="the update line")
    line = next(u.message for u in rec.of(CHANGE) if "b.md" in u.message)
    assert "indexed 1" in line and "skipped notes/la: a symbolic link loop (not followed)" in line, line
    assert not [u for u in rec.updates if u.kind == "error"], [u.message for u in rec.updates]


def test_a_file_that_vanished_before_its_read_is_skipped_and_the_rest_is_indexed(tmp_path, svc, start_watcher,
                                                                                 monkeypatch):
    root = make_tree(tmp_path / "notes", {"a.md": "alpha"})
    svc.index_paths([root])
    gone = root / "draft.md"
    planned = watcher_mod.plan_changes

    def plan_then_vanish(*args, **kwargs):  # the file was there when the event came; gone when it is read
        plan = planned(*args, **kwargs)
        plan.index.insert(0, str(gone))
        return plan

    monkeypatch.setattr(watcher_mod, "plan_changes", plan_then_vanish)
    _, rec = start_watcher()
    (root / "c.md").write_text("quince paste\n", encoding="utf-8")
    wait_for(lambda: keyword_hits(svc, "quince") == [str(root / "c.md")], what="the rest of the batch indexed")
    wait_for(lambda: any("draft.md" in u.message for u in rec.of(CHANGE)), what="the update line")
    line = next(u.message for u in rec.of(CHANGE) if "draft.md" in u.message)
    assert "skipped notes/draft.md: not found" in line, line


def _config(tmp_path: Path) -> Path:
    return write_settings(tmp_path / "config", embedder={"kind": "hash"}, watch={"quiet_ms": 100})


def test_watch_on_a_missing_library_says_so_and_creates_nothing(tmp_path):
    config = _config(tmp_path)
    db = tmp_path / "missing" / "lib.db"
    res = run_cli(db, "watch", config=config)
    assert res.returncode == 1 and f"error: no library at {db}" in res.stderr and "Traceback" not in res.stderr
    assert not db.exists() and not db.parent.exists(), "no empty library was made"
    for command in (["search", "x"], ["context", "x"], ["stats"], ["list"], ["check"]):  # read-only ones
        res = run_cli(db, *command, config=config)
        assert res.returncode == 1 and "no library at" in res.stderr, (command, res.stderr)
    assert not db.exists()


def test_watch_under_a_stored_pause_says_it_is_paused_and_embeds_nothing(tmp_path):
    config = _config(tmp_path)
    db = tmp_path / "lib.db"
    root = make_tree(tmp_path / "notes", {f"n{i}.md": f"note {i} about persimmons" for i in range(5)})
    assert run_cli(db, "index", root, "--no-embed", "-q", config=config).returncode == 0
    svc = MemoryService(Settings(), db_path=db, embedder=HashEmbedder())
    svc.set_embedding_paused(True)  # the person's Cancel in the app, kept in the library
    pending = svc.stats().pending_vectors
    svc.close()
    proc = spawn_cli(db, "watch", config=config, logs=tmp_path / "log")
    out = ""
    try:
        wait_for(lambda: "watching 1 folder" in (tmp_path / "log" / "stdout").read_text(), timeout=60,
                 what="the watch")
        (root / "new.md").write_text("loquat jam\n", encoding="utf-8")
        wait_for(lambda: "indexed 1: notes/new.md" in (tmp_path / "log" / "stdout").read_text(), timeout=30,
                 what="the edit indexed")
    finally:
        proc.send_signal(signal.SIGINT)
        rc, out, err = finish(proc, timeout=60)
    assert rc == 0, err
    assert (f"embedding is paused (Cancel in the app): {pending} passages without vectors (keyword search finds "
            "them); resume with `desktop-memory embed` or Resume in the app") in out, out
    assert "embedding 5 passages" not in out and "passages without vectors\n" not in out
    res = run_cli(db, "stats", config=config)  # as a person would look: nothing was embedded under the pause
    assert "vectors    0 " in res.stdout, res.stdout
