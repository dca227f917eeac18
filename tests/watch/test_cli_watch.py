"""`desktop-memory watch` as a real subprocess: a line per update, Ctrl+C stops cleanly, and it shares one
database with other processes (an indexer, searches) through SQLite's locking."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from tests.conftest import MDDOCS
from tests.support.cli import finish, run_cli, spawn_cli, write_settings
from tests.support.folders import copy_tree

from .conftest import make_tree, wait_for


def _config(tmp_path: Path) -> Path:
    return write_settings(tmp_path / "config", embedder={"kind": "hash"}, watch={"quiet_ms": 100})


def _stdout(proc: subprocess.Popen) -> str:
    return (proc._logs[2] / "stdout").read_text()  # type: ignore[attr-defined]


def _found(db: Path, config: Path, word: str) -> list[str]:
    res = run_cli(db, "search", word, "--backend", "keyword", "--json", config=config)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    return [r["source"] for r in json.loads(res.stdout)]


def test_watch_prints_a_line_per_update_and_stops_cleanly_on_ctrl_c(tmp_path):
    config = _config(tmp_path)
    db = tmp_path / "x.db"
    root = make_tree(tmp_path / "notes", {"a.md": "alpha"})
    assert run_cli(db, "index", root, "-q", config=config).returncode == 0
    proc = spawn_cli(db, "watch", config=config, logs=tmp_path / "log")
    try:
        wait_for(lambda: "up to date" in _stdout(proc), timeout=60, what="watch to start")
        assert "watching 1 folder" in _stdout(proc)
        (root / "b.md").write_text("borogove mimsy\n")
        wait_for(lambda: "indexed 1: notes/b.md" in _stdout(proc), timeout=30, what="the update line")
        assert _found(db, config, "borogove") == [str(root / "b.md")]
    finally:
        proc.send_signal(signal.SIGINT)
        rc, out, err = finish(proc, timeout=60)
    assert rc == 0, err
    assert out.rstrip().endswith("stopped watching") and "Traceback" not in err


def test_watch_a_folder_not_in_the_library_indexes_it_first(tmp_path):
    config = _config(tmp_path)
    db = tmp_path / "x.db"
    root = make_tree(tmp_path / "fresh", {"f.md": "frumious bandersnatch"})
    proc = spawn_cli(db, "watch", str(root), "--no-embed", config=config, logs=tmp_path / "log")
    try:
        wait_for(lambda: f"added {root}: indexed 1" in _stdout(proc), timeout=60, what="the first index")
        wait_for(lambda: "watching 1 folder" in _stdout(proc), timeout=30, what="the watch")
        assert _found(db, config, "bandersnatch") == [str(root / "f.md")]
    finally:
        proc.send_signal(signal.SIGTERM)
        rc, _, err = finish(proc, timeout=60)
    assert rc == 0, err


def test_watch_refuses_a_missing_folder_and_an_empty_library_with_a_message(tmp_path):
    config = _config(tmp_path)
    res = run_cli(tmp_path / "x.db", "watch", str(tmp_path / "nope"), config=config)
    assert res.returncode == 1 and "not a folder" in res.stderr and "Traceback" not in res.stderr
    res = run_cli(tmp_path / "x.db", "watch", config=config)
    assert res.returncode == 1 and "no folders yet" in res.stderr


def test_watch_cooperates_with_another_indexer_and_searches_on_one_database(tmp_path, eval_dir):
    """A `watch` process indexes edits while a second process indexes a 300-file folder and a third searches
    in a loop: everyone waits their turn on SQLite's lock; nothing fails, nothing is lost, the file stays sound."""
    config = _config(tmp_path)
    db = tmp_path / "x.db"
    watched = make_tree(tmp_path / "watched", {"seed.md": "seed"})
    other = tmp_path / "other"
    files = copy_tree(MDDOCS / "hugo", other, limit=300)
    assert run_cli(db, "index", watched, "-q", config=config).returncode == 0
    watch = spawn_cli(db, "watch", config=config, logs=tmp_path / "watchlog")
    try:
        wait_for(lambda: "up to date" in _stdout(watch), timeout=60, what="watch to start")
        indexer = spawn_cli(db, "index", str(other), "--json", config=config, logs=tmp_path / "indexlog")
        written = []
        i = 0
        while indexer.poll() is None or i < 5:
            path = watched / f"live{i}.md"
            path.write_text(f"# Live {i}\n\nconcurrentword{i} and more text\n")
            written.append(path)
            res = run_cli(db, "search", "hugo template", "--backend", "keyword", "--json", config=config)
            assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
            i += 1
        rc, out, err = finish(indexer)
        assert rc == 0 and "Traceback" not in err, err
        assert json.loads(out)["indexed"] + json.loads(out)["skipped"] == len(files)
        for n, path in enumerate(written):
            wait_for(lambda p=path, n=n: _found(db, config, f"concurrentword{n}") == [str(p)], timeout=60,
                     what=f"{path.name} indexed by the watch")
    finally:
        watch.send_signal(signal.SIGINT)
        rc, out, err = finish(watch, timeout=60)
    assert rc == 0 and "Traceback" not in err and "error" not in out.lower(), out + err
    check = run_cli(db, "check", config=config)
    assert check.returncode == 0 and check.stdout.strip().endswith("ok"), check.stdout
    assert os.path.exists(db)
