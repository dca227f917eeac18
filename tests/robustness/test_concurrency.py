"""Issue 5 §6: searching while indexing, several real processes on one database, a busy database, cancel (by
Event, during a long scan, and Ctrl-C on the CLI)."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import apsw

from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.service import MemoryService

from .conftest import AUDIT, MDDOCS, Probe, audit_db, copy_tree, finish, run_cli, spawn_cli, wait_for


def test_three_cli_processes_index_one_new_database_at_once(tmp_path, hash_config, ledger, eval_present):
    """Two CLIs index the same folder and a third another folder, all started together on a database that
    does not exist yet; meanwhile a fourth process searches. Everyone waits their turn; nothing is corrupted."""
    shared = tmp_path / "shared"
    other = tmp_path / "other"
    files = copy_tree(MDDOCS / "fastapi", shared) + copy_tree(MDDOCS / "hugo", other, limit=300)
    ledger.tried(files)
    ledger.fault("concurrent CLI writers on one (new) database", 3)
    db = tmp_path / "x.db"
    procs = [spawn_cli(db, "index", folder, "--json", config=hash_config, logs=tmp_path / f"w{i}")
             for i, folder in enumerate([shared, shared, other])]
    searches = []
    while any(p.poll() is None for p in procs):
        s = run_cli(db, "search", "path parameters", "--backend", "keyword", "--json", config=hash_config)
        searches.append(s)
        ledger.fuzzed()
    results = [finish(p) for p in procs]
    for rc, out, err in results:
        assert rc == 0, err
        assert "Traceback" not in err and "busy" not in err
        json.loads(out)
    for s in searches:  # a reader during the writes: an answer (maybe still empty), never an error
        if s.returncode == 1 and "no library at" in s.stderr:  # before the first writer made the database
            continue
        assert s.returncode == 0 and "Traceback" not in s.stderr, s.stderr
        assert isinstance(json.loads(s.stdout), list)
    state = audit_db(db, ledger)
    assert state.indexed_paths() | {p for p, v in state.docs.items() if v[0] != "indexed"} == {str(f) for f in files}
    assert state.pending == set()
    embedded = sum(json.loads(out)["chunks_embedded"] for _, out, _ in results)
    assert embedded == len(state.embedded), "no chunk was embedded twice"
    again = json.loads(run_cli(db, "index", shared, other, "--json", config=hash_config).stdout)
    assert again["indexed"] == 0 and again["chunks_embedded"] == 0 and again["unchanged"] == len(files)


def _hold_write_lock(db, release: threading.Event, held: threading.Event) -> None:
    conn = apsw.Connection(str(db))
    conn.execute("begin immediate")
    held.set()
    release.wait(180)
    conn.execute("commit")
    conn.close()


def test_a_busy_database_makes_the_cli_wait_its_turn(tmp_path, hash_config, ledger, eval_present):
    """Another app instance holds the write lock: briefly (the CLI waits, then indexes) and for longer than the old
    10 s busy timeout (issue 30 item 6: the CLI said "busy" and failed; now it says it is waiting, after a few
    seconds, and indexes once the lock is free). What was committed before is kept either way."""
    lib = tmp_path / "lib"
    files = copy_tree(MDDOCS / "fastapi" / "tutorial", lib, limit=5)
    ledger.tried(files)
    ledger.fault("database write-locked by another process (short, long)", 2)
    short_db, long_db = tmp_path / "short.db", tmp_path / "long.db"
    for db in (short_db, long_db):  # both already hold one indexed file
        assert run_cli(db, "index", files[0], config=hash_config).returncode == 0
    locks = {db: (threading.Event(), threading.Event()) for db in (short_db, long_db)}
    holders = [threading.Thread(target=_hold_write_lock, args=(db, release, held))
               for db, (release, held) in locks.items()]
    for h in holders:
        h.start()
    assert all(held.wait(10) for _, held in locks.values())
    started = time.monotonic()
    waiting = spawn_cli(short_db, "index", lib, "--json", config=hash_config, logs=tmp_path / "short")
    patient = spawn_cli(long_db, "index", lib, "--json", config=hash_config, logs=tmp_path / "long")
    try:
        time.sleep(1.0)  # the short holder lets go while the first CLI waits for it (before its notice)
        locks[short_db][0].set()
        rc, out, err = finish(waiting, 120)
        assert rc == 0, err
        assert json.loads(out)["indexed"] == 4 and "waiting for another" not in err
        wait_for(lambda: "waiting for another desktop-memory process" in (tmp_path / "long" / "stderr").read_text(),
                 10, what="the waiting notice")
        noticed = time.monotonic() - started
        time.sleep(max(0.0, 13.0 - (time.monotonic() - started)))  # longer than the old 10 s busy timeout
        assert patient.poll() is None, "still waiting its turn"
        locks[long_db][0].set()
        rc, out, err = finish(patient, 120)
    finally:
        for release, _ in locks.values():
            release.set()
        for h in holders:
            h.join(30)
    assert rc == 0 and "Traceback" not in err and "is busy" not in err, err
    assert 2.5 < noticed < 10, noticed
    assert err.count("note: waiting for another desktop-memory process to finish writing to") == 1, err
    assert json.loads(out)["indexed"] == 4
    assert audit_db(long_db, ledger).indexed_paths() == {str(f) for f in files}
    audit_db(short_db, ledger)


def test_searches_from_threads_while_a_service_indexes(tmp_path, ledger, eval_present):
    lib = tmp_path / "lib"
    files = copy_tree(MDDOCS / "hugo", lib)
    ledger.tried(files)
    svc = MemoryService(Settings(), db_path=tmp_path / "s.db", embedder=HashEmbedder(64))
    errors: list[BaseException] = []
    seen: dict[str, list[tuple[float, int]]] = {"keyword": [], "hybrid": [], "bm25": []}
    indexing = threading.Event()
    done = threading.Event()

    def index() -> None:
        try:
            indexing.set()
            svc.index_paths([lib])
        except BaseException as exc:
            errors.append(exc)
        finally:
            done.set()

    def search(backend: str) -> None:
        indexing.wait(10)
        try:
            while not done.is_set():
                t0 = time.monotonic()
                hits = svc.search_outcome("hugo template", backend=backend, top_k=500).results
                seen[backend].append((time.monotonic() - t0, len({h.source for h in hits})))
                ledger.fuzzed()
                time.sleep(0.01)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=index)] + [threading.Thread(target=search, args=(b,)) for b in seen]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(240)
        assert not errors, errors
        final = len({h.source for h in svc.search_outcome("hugo template", backend="keyword", top_k=500).results})
        for backend, samples in seen.items():
            assert samples, f"no {backend} search ran during indexing"
            assert max(lat for lat, _ in samples) < 10, f"{backend} search blocked behind the writer"
        counts = [n for _, n in seen["keyword"]]
        assert min(counts) < final, "searches saw the index while it was still being written"
        audit_db(tmp_path / "s.db", ledger)
    finally:
        svc.close()


def test_cancel_mid_extract_then_mid_embed(tmp_path, ledger, eval_present):
    lib = tmp_path / "lib"
    files = copy_tree(MDDOCS / "fastapi", lib)
    ledger.tried(files)
    ledger.fault("cancel during extract, during embed", 2)
    svc = MemoryService(Settings(), db_path=tmp_path / "c.db", embedder=HashEmbedder(64))
    try:
        cancel = threading.Event()
        when: list[float] = []

        def stop_after_50(p):
            if p.phase == "extract" and p.files_done >= 50 and not cancel.is_set():
                cancel.set()
                when.append(time.monotonic())

        summary = svc.index_paths([lib], progress=stop_after_50, cancel=cancel)
        assert summary.cancelled and time.monotonic() - when[0] < 5
        state = audit_db(tmp_path / "c.db", ledger)
        indexed = {o.path for o in summary.outcomes if o.status == "indexed"}
        assert state.indexed_paths() == indexed and 50 <= len(indexed) < len(files)
        assert state.embedded == set()

        cancel = threading.Event()

        def stop_in_embed(p):
            if p.phase == "embed" and p.chunks_embedded > 0:
                cancel.set()

        second = svc.index_paths([lib], progress=stop_in_embed, cancel=cancel)
        assert second.cancelled and second.unchanged == len(indexed)
        state = audit_db(tmp_path / "c.db", ledger)
        assert state.embedded and state.pending and len(state.embedded) == second.chunks_embedded

        third = svc.index_paths([lib])
        assert not third.cancelled and third.indexed == 0
        assert third.chunks_embedded == len(state.pending)
        assert audit_db(tmp_path / "c.db", ledger).pending == set()
    finally:
        svc.close()


def test_cancel_during_the_scan_of_a_big_folder(tmp_path, ledger):
    """Cancel is honoured while a big tree is still being walked (no frozen "Scanning…"), and the scan reports
    how many files it has found so far."""
    lib = tmp_path / "big"
    for d in range(100):
        folder = lib / f"d{d:03d}"
        folder.mkdir(parents=True)
        for f in range(60):
            (folder / f"n{f:02d}.txt").write_text(f"note {d} {f}\n", encoding="utf-8")
    ledger.tried_folder(lib)
    ledger.fault("cancel during the scan")
    svc = MemoryService(Settings(), db_path=tmp_path / "big.db", embedder=HashEmbedder(16))
    try:
        cancel = threading.Event()
        phases = []

        def progress(p):
            phases.append((p.phase, p.files_total))
            if p.phase == "scan":
                cancel.set()

        with AUDIT.recording() as events:
            summary = svc.index_paths([lib], progress=progress, cancel=cancel)
        listed = [e for e in events if e[0] == "os.scandir"]
        assert summary.cancelled and summary.outcomes == []
        assert len(listed) < 10, f"the walk went on after Cancel ({len(listed)} folders listed of 101)"
        assert "extract" not in {phase for phase, _ in phases}
        assert svc.stats().documents == {}

        seen = []
        full = svc.index_paths([lib], progress=lambda p: seen.append((p.phase, p.files_total)))
        assert full.indexed == 6000
        scan_counts = [n for phase, n in seen if phase == "scan"]
        assert scan_counts == sorted(scan_counts)
    finally:
        svc.close()


def test_ctrl_c_on_the_cli_cancels_cleanly(tmp_path, hash_config, ledger, eval_present):
    lib = tmp_path / "lib"
    files = copy_tree(MDDOCS, lib)
    ledger.tried(files)
    ledger.fault("SIGINT (Ctrl-C) during CLI indexing")
    db = tmp_path / "x.db"
    proc = spawn_cli(db, "index", lib, config=hash_config, logs=tmp_path / "run")
    probe = Probe(db)
    try:
        wait_for(lambda: proc.poll() is None and probe.counts()["indexed"] >= 50, 120, what="50 documents")
    finally:
        probe.close()
    os.kill(proc.pid, signal.SIGINT)
    rc, out, err = finish(proc, 120)
    assert rc == 130, (out, err)
    assert "cancelled: everything committed so far is kept; run again to finish." in out
    assert "Traceback" not in err
    state = audit_db(db, ledger)
    assert 50 <= len(state.indexed_paths()) < len(files)
    again = run_cli(db, "index", lib, "--json", config=hash_config)
    summary = json.loads(again.stdout)
    assert summary["unchanged"] == len(state.indexed_paths())
    assert summary["indexed"] == len(files) - len(state.indexed_paths())
    assert audit_db(db, ledger).pending == set()


class _McpWire:
    """`desktop-memory mcp` on the database, spoken to line by line (JSON-RPC over stdio), as a chat app does."""

    def __init__(self, db, config) -> None:
        import subprocess

        from .conftest import REPO, cli_cmd, cli_env

        self.proc = subprocess.Popen(cli_cmd(db, "mcp"), cwd=REPO, env=cli_env(config), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.ident = 0
        self.ask("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "wire", "version": "1"}})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def ask(self, method: str, params: dict) -> dict:
        self.ident += 1
        self._send({"jsonrpc": "2.0", "id": self.ident, "method": method, "params": params})
        assert self.proc.stdout is not None
        return json.loads(self.proc.stdout.readline())

    def search(self, query: str) -> dict:
        return self.ask("tools/call", {"name": "search", "arguments": {"query": query, "backend": "keyword"}})

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except Exception:
            self.proc.kill()
            self.proc.wait(10)


def test_three_index_runs_beside_watch_and_mcp_all_wait_their_turn(tmp_path, hash_config, ledger, eval_present):
    """Issue 30 item 6: three `index` runs beside `watch` and an MCP server, while another process holds the write
    lock for longer than the old 10 s busy timeout (one run in two failed with "busy" before): every run waits its
    turn and succeeds, the watch indexes an edit meanwhile, MCP answers every search."""
    watched = tmp_path / "watched"
    copy_tree(MDDOCS / "fastapi" / "tutorial", watched, limit=5)
    folders = [tmp_path / f"in{i}" for i in range(3)]
    files = [f for i, folder in enumerate(folders) for f in copy_tree(MDDOCS / "hugo", folder, limit=15 * (i + 1))]
    ledger.tried(files)
    ledger.fault("3 index runs + watch + MCP + a long write lock on one database")
    db = tmp_path / "x.db"
    assert run_cli(db, "index", watched, "-q", config=hash_config).returncode == 0
    watch = spawn_cli(db, "watch", config=hash_config, logs=tmp_path / "watch")
    mcp = _McpWire(db, hash_config)
    release, held = threading.Event(), threading.Event()
    holder = threading.Thread(target=_hold_write_lock, args=(db, release, held))
    runs = []
    try:
        wait_for(lambda: "watching 1 folder" in (tmp_path / "watch" / "stdout").read_text(), 60, what="the watch")
        holder.start()
        assert held.wait(10)
        runs = [spawn_cli(db, "index", folder, "--json", config=hash_config, logs=tmp_path / f"run{i}")
                for i, folder in enumerate(folders)]
        (watched / "edit.md").write_text("# Edit\n\ntamarillo chutney\n", encoding="utf-8")
        deadline = time.monotonic() + 11.0  # the lock is held longer than the old busy timeout
        answers = []
        while time.monotonic() < deadline:
            answers.append(mcp.search("path parameters"))
            time.sleep(0.5)
        release.set()
        results = [finish(p, 240) for p in runs]
        wait_for(lambda: "indexed 1: watched/edit.md" in (tmp_path / "watch" / "stdout").read_text(), 60,
                 what="the watch indexing the edit")
        answers.append(mcp.search("tamarillo"))
    finally:
        release.set()
        if holder.is_alive():
            holder.join(30)
        mcp.close()
        watch.send_signal(signal.SIGINT)
        watch_rc, _, watch_err = finish(watch, 60)
        for p in runs:
            if p.poll() is None:
                p.kill()
    for rc, out, err in results:
        assert rc == 0 and "Traceback" not in err and "is busy" not in err, err
        assert json.loads(out)["failed"] == 0
    assert any("waiting for another desktop-memory process" in err for _, _, err in results)
    assert watch_rc == 0 and "Traceback" not in watch_err, watch_err
    assert all("result" in a and not a["result"].get("isError") for a in answers), answers
    state = audit_db(db, ledger)
    assert {str(f) for f in files} <= state.indexed_paths() and str(watched / "edit.md") in state.indexed_paths()
