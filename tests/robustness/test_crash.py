"""Issue 5 §2: kill -9 the real CLI indexer mid-run (extract phase, embed phase with the real model, embed phase
against a slow Ollama, inside a PDF extraction); the next open must find a consistent database, and the next run
must finish exactly what was missing."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from .conftest import (
    MDDOCS,
    PDFS,
    Probe,
    alive,
    audit_db,
    children_of,
    copy_tree,
    kill9,
    run_cli,
    spawn_cli,
    wait_for,
    write_settings,
)
from .pdf_bombs import slow_pdf


def kill_when(db: Path, proc, condition, timeout: float, what: str) -> dict[str, int]:
    """Poll the database as a second reader; SIGKILL the indexer the moment ``condition(counts)`` holds.
    Returns the last counts seen before the kill (what was certainly committed)."""
    probe = Probe(db)
    seen: dict[str, int] = {}

    def ready():
        nonlocal seen
        if proc.poll() is not None:
            raise AssertionError(f"the indexer exited (rc {proc.returncode}) before {what}")
        seen = probe.counts()
        return condition(seen)

    try:
        wait_for(ready, timeout, interval=0.01, what=what)
        kill9(proc)
    finally:
        if proc.poll() is None:
            kill9(proc)
        probe.close()
    return seen


def check_nothing_lost(before: dict[str, int], state, ledger) -> None:
    lost_docs = before["indexed"] - len(state.indexed_paths())
    lost_vectors = before["embedded"] - len(state.embedded)
    ledger.data_lost(max(0, lost_docs) + max(0, lost_vectors))
    assert lost_docs <= 0 and lost_vectors <= 0, f"committed work lost: {lost_docs} docs, {lost_vectors} vectors"


def rerun_finishes_only_what_was_missing(db, lib, config, state, ledger, *, files_total: int, timeout=300):
    """Run the CLI again; it must re-read no committed document and embed exactly the queue (+ new chunks)."""
    proc = run_cli(db, "index", lib, "--json", config=config, timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    summary = json.loads(proc.stdout)
    outcome = {o["path"]: o["status"] for o in summary["outcomes"]}
    for path in state.indexed_paths():
        assert outcome[path] == "unchanged", f"{path} was committed before the kill but re-read: {outcome[path]}"
    assert summary["indexed"] == files_total - len(state.indexed_paths())
    assert summary["chunks_embedded"] == len(state.pending) + summary["chunks_added"]
    after = audit_db(db, ledger)
    assert after.pending == set()
    new_ids = after.canonical - state.canonical
    assert after.embedded - state.embedded == state.pending | new_ids, "the run embedded exactly what was missing"
    for cid in state.embedded:  # vectors committed before the kill were kept, not recomputed or dropped
        assert after.vectors[cid] == state.vectors[cid]
    return summary, after


def test_kill9_during_extract_phase(tmp_path, hash_config, ledger, eval_present):
    lib = tmp_path / "lib"
    files = copy_tree(MDDOCS, lib)
    assert len(files) > 1000
    ledger.tried(files)
    ledger.fault("kill -9 during extract")
    db = tmp_path / "x.db"
    proc = spawn_cli(db, "index", lib, "--json", config=hash_config, logs=tmp_path / "run1")
    before = kill_when(db, proc, lambda c: c["indexed"] >= 100, 180, "100 documents committed")

    state = audit_db(db, ledger)
    check_nothing_lost(before, state, ledger)
    assert 100 <= len(state.indexed_paths()) < len(files), "the kill landed in the extract phase"
    assert state.embedded == set() and state.pending == state.canonical
    rerun_finishes_only_what_was_missing(db, lib, hash_config, state, ledger, files_total=len(files))


@pytest.mark.slow
def test_kill9_during_embed_phase_with_the_real_model(tmp_path, local_config, ledger, eval_present):
    """The bundled ONNX model, ~100 chunks: killed after its first committed batch of vectors."""
    lib = tmp_path / "lib"
    files = copy_tree(MDDOCS / "fastapi", lib, limit=10)
    ledger.tried(files)
    ledger.fault("kill -9 during embed (real model)")
    db = tmp_path / "x.db"
    proc = spawn_cli(db, "index", lib, "--json", config=local_config, logs=tmp_path / "run1")
    before = kill_when(db, proc, lambda c: c["embedded"] > 0 and c["pending"] > 0, 240,
                       "the first batch of vectors committed")

    state = audit_db(db, ledger)
    check_nothing_lost(before, state, ledger)
    assert len(state.indexed_paths()) == len(files)
    assert state.embedded and state.pending, "the kill landed in the embed phase"
    summary, _ = rerun_finishes_only_what_was_missing(db, lib, local_config, state, ledger,
                                                          files_total=len(files))
    assert summary["indexed"] == 0 and summary["chunks_embedded"] == len(state.pending)


def test_kill9_during_embed_phase_against_a_slow_ollama(tmp_path, ollama, ledger, eval_present):
    """Killed while an HTTP request to the embedder is in flight."""
    lib = tmp_path / "lib"
    files = copy_tree(MDDOCS / "fastapi" / "advanced", lib)
    ledger.tried(files)
    ledger.fault("kill -9 during embed (request in flight)")
    config = write_settings(tmp_path / "cfg", embedder={
        "kind": "ollama", "ollama_url": ollama.url, "ollama_model": "nomic-embed-text", "batch_size": 8})
    ollama.delay_s = 0.15
    db = tmp_path / "x.db"
    proc = spawn_cli(db, "index", lib, "--json", config=config, logs=tmp_path / "run1")
    before = kill_when(db, proc, lambda c: c["embedded"] >= 64 and c["pending"] > 64, 240,
                       "some vectors committed")

    state = audit_db(db, ledger)
    check_nothing_lost(before, state, ledger)
    assert state.embedded and state.pending
    ollama.delay_s = 0.0
    ollama.clear()
    summary, _ = rerun_finishes_only_what_was_missing(db, lib, config, state, ledger, files_total=len(files))
    assert summary["indexed"] == 0
    # what went over the wire the second time is exactly the queue (plus one dimension probe)
    sent = [t for batch in ollama.embed_requests() for t in batch]
    assert len(sent) == len(state.pending)


def test_kill9_during_pdf_extraction_leaves_no_orphan_worker(tmp_path, hash_config, ledger, eval_present):
    """The PDF sandbox process must not outlive a killed app (its time bound is enforced by the app)."""
    lib = tmp_path / "lib"
    lib.mkdir()
    slow_pdf(lib / "a-slow.pdf")  # ~a minute of extraction on this machine
    shutil.copyfile(PDFS / "crazyones.pdf", lib / "b-crazyones.pdf")
    copy_tree(MDDOCS / "fastapi" / "tutorial", lib / "notes", limit=5)
    ledger.tried_folder(lib)
    ledger.fault("kill -9 during PDF extraction")
    db = tmp_path / "x.db"
    proc = spawn_cli(db, "index", lib, "--json", config=hash_config, logs=tmp_path / "run1")
    try:
        workers = wait_for(lambda: children_of(proc.pid), 120, interval=0.05, what="the PDF worker to start")
        time.sleep(1.0)  # let it get deep into the slow file
        assert all(alive(w) for w in workers)
    finally:
        kill9(proc)
    try:
        wait_for(lambda: not any(alive(w) for w in workers), 15, interval=0.1,
                 what=f"orphaned PDF worker(s) {sorted(workers)} to exit")
    finally:
        for w in workers:  # never leave a CPU-burning orphan behind, even when the assertion failed
            if alive(w):
                os.kill(w, signal.SIGKILL)

    state = audit_db(db, ledger)
    assert state.docs == {}, "killed before the first document committed"
    # The next run (with a tighter time bound, so the slow file costs 5 s, not a minute) finishes the batch.
    config = write_settings(tmp_path / "cfg-5s", embedder={"kind": "hash"}, ingest={"pdf_timeout_s": 5.0})
    proc2 = run_cli(db, "index", lib, "--json", config=config, timeout=300)
    assert proc2.returncode == 0, proc2.stderr
    summary = json.loads(proc2.stdout)
    by_name = {Path(o["path"]).name: (o["status"], o["reason"]) for o in summary["outcomes"]}
    assert by_name["a-slow.pdf"] == ("failed", "PDF extraction took longer than 5 s")
    assert summary["indexed"] == 6 and summary["chunks_embedded"] == summary["chunks_added"]
    after = audit_db(db, ledger)
    assert after.pending == set()
