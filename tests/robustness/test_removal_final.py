"""Issue 30 item 4: a removal stays removed. `desktop-memory remove FOLDER` killed mid-removal (the real CLI in a
subprocess, SIGKILL): until a command that writes finishes it, the folder's text is not searchable or listed and
`check` says a removal is in progress; `index` of another folder finishes it first, and after `compact` the text
is gone from the file's bytes. Before: the rest of the folder stayed listed and searchable through `index` and
`compact`, with `check` saying ok."""

from __future__ import annotations

import json
from pathlib import Path

import apsw

from desktop_memory.config import EmbedderSettings, Settings
from desktop_memory.service import MemoryService

from .conftest import Probe, kill9, run_cli, spawn_cli, wait_for

WORD = "quixoticzebrafjord"  # in no real file
TAIL = WORD[-8:].encode()  # FTS5 stores a term after the prefix it shares with the previous one: look for its tail
FILES = 2000  # enough that a removal (100 documents a transaction) is still running when it is killed


def _tree(folder: Path, n: int, word: str) -> Path:
    folder.mkdir(parents=True)
    for i in range(n):
        (folder / f"note-{i:04d}.md").write_text(f"# Note {i}\n\nThe {word} number {i} lives here.\n", encoding="utf-8")
    return folder


def _left_under(db: Path, folder: Path) -> tuple[int, str | None]:
    """(documents still under ``folder``, the recorded pending removal) as a second process sees them."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        conn.setbusytimeout(5000)
        n = conn.execute("select count(*) from documents where path like ?", (f"{folder}/%",)).fetchone()[0]
        row = conn.execute("select value from meta where key = 'pending_removal'").fetchone()
        return n, (row[0] if row else None)
    finally:
        conn.close()


def _bytes_hold_word(db: Path) -> bool:
    return any(Path(f"{db}{s}").exists() and TAIL in Path(f"{db}{s}").read_bytes() for s in ("", "-wal"))


def test_a_killed_remove_stays_hidden_and_the_next_writer_finishes_it(tmp_path, hash_config):
    db = tmp_path / "db" / "m.db"
    gone = _tree(tmp_path / "gone", FILES, WORD)
    other = _tree(tmp_path / "other", 3, "kiwi")
    svc = MemoryService(Settings(embedder=EmbedderSettings(kind="hash")), db_path=db)
    try:
        svc.index_paths([gone], embed=False)
    finally:
        svc.close()

    proc = spawn_cli(db, "remove", "-q", str(gone), config=hash_config, logs=tmp_path / "logs")
    probe = Probe(db)

    def removing() -> bool:
        assert proc.poll() is None, "the removal ended before it could be killed"
        return 0 < probe.counts()["docs"] < FILES

    try:  # the moment its first slice has committed, stop it dead (what `kill -9` or a power cut does)
        wait_for(removing, timeout=120, interval=0.005, what="the removal to start")
        kill9(proc)
    finally:
        if proc.poll() is None:
            kill9(proc)
        probe.close()
    left, pending = _left_under(db, gone)
    assert left > 0 and pending and str(gone) in json.loads(pending), "killed in the middle of the removal"

    res = run_cli(db, "check", "-q", config=hash_config)
    assert res.returncode == 1 and "removal in progress" in res.stdout and str(gone) in res.stdout, res.stdout
    res = run_cli(db, "search", WORD, "--backend", "keyword", "--json", config=hash_config)
    assert res.returncode == 0 and json.loads(res.stdout) == [], "the interrupted removal's text is not offered"
    res = run_cli(db, "list", config=hash_config)
    assert res.returncode == 0 and str(gone) not in res.stdout

    res = run_cli(db, "index", "-q", str(other), config=hash_config)  # another folder: the removal is finished first
    assert res.returncode == 0 and "interrupted removal" in res.stderr, res.stderr
    assert _left_under(db, gone) == (0, None)
    assert run_cli(db, "compact", "-q", config=hash_config).returncode == 0
    assert not _bytes_hold_word(db), "removed means gone: not in the file's bytes"
    res = run_cli(db, "check", "-q", config=hash_config)
    assert res.returncode == 0 and res.stdout.strip().endswith("ok"), res.stdout
    res = run_cli(db, "search", "kiwi", "--backend", "keyword", "--json", config=hash_config)
    assert {Path(r["source"]).parent for r in json.loads(res.stdout)} == {other}


def test_compact_alone_finishes_an_interrupted_removal(tmp_path, hash_config):
    """The state a kill leaves (intent recorded, part of the documents gone), made in-process: `compact` finishes
    the removal before compacting, so the text is not carried into the rebuilt file."""
    db = tmp_path / "db" / "m.db"
    gone = _tree(tmp_path / "gone", 30, WORD)
    svc = MemoryService(Settings(embedder=EmbedderSettings(kind="hash")), db_path=db)
    try:
        svc.index_paths([gone], embed=False)
        with svc.writing() as store:  # what `remove` commits first, then its first slice
            store.begin_removal([str(gone)])
            store.remove_documents(store.removal_slice([str(gone)], 10))
    finally:
        svc.close()
    assert _left_under(db, gone)[0] == 20
    res = run_cli(db, "compact", "-q", config=hash_config)
    assert res.returncode == 0 and "interrupted removal" in res.stderr, res.stderr
    assert _left_under(db, gone) == (0, None) and not _bytes_hold_word(db)


def test_a_running_watch_finishes_a_removal_killed_beside_it(tmp_path, hash_config):
    """QA walk: `remove` killed while `watch` (or the window) already runs. `check` says "the window or `watch`
    finishes it", but they finished interrupted removals only when they started: the removed folder's text stayed
    in the library file until the next start. A removal that makes no progress between two of the watcher's looks
    at the library (every 2 s) is now finished by the running watcher."""
    db = tmp_path / "db" / "m.db"
    lib = tmp_path / "lib"
    gone = _tree(lib / "gone", 30, WORD)
    _tree(lib / "kept", 3, "kiwi")
    svc = MemoryService(Settings(embedder=EmbedderSettings(kind="hash")), db_path=db)
    try:
        svc.index_paths([lib], embed=False)
    finally:
        svc.close()
    proc = spawn_cli(db, "watch", "--no-embed", config=hash_config, logs=tmp_path / "logs")
    try:
        wait_for(lambda: "watching 1 folder" in (tmp_path / "logs" / "stdout").read_text(), timeout=60,
                 what="the watch to start")
        svc = MemoryService(Settings(embedder=EmbedderSettings(kind="hash")), db_path=db)
        try:  # what a `remove` killed after its first slice leaves, written by another process than the watch
            with svc.writing() as store:
                store.begin_removal([str(gone)], exclude=[str(gone)])
                store.remove_documents(store.removal_slice([str(gone)], 10))
        finally:
            svc.close()
        assert _left_under(db, gone)[0] == 20
        wait_for(lambda: _left_under(db, gone) == (0, None), timeout=30, interval=0.2,
                 what="the running watch to finish the removal")
        wait_for(lambda: "finishing a removal another process left unfinished" in
                 (tmp_path / "logs" / "stdout").read_text(), timeout=10, what="the watch to say so")
    finally:
        kill9(proc)
    res = run_cli(db, "check", "-q", config=hash_config)
    assert res.returncode == 0 and res.stdout.strip().endswith("ok"), res.stdout
