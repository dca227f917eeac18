"""Issue 5 §5: embedder faults through the real service and pipeline against a real HTTP server speaking Ollama's
API: down, slow, HTTP 500, model not pulled, wrong dimension, connection dropped mid-batch. Documents stay
keyword-searchable, the error says what to do, a failed batch leaves no vector, the next run finishes the queue."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from desktop_memory.config import EmbedderSettings, Settings
from desktop_memory.embed import OllamaEmbedder
from desktop_memory.embed.ollama import PROBE_TEXT
from desktop_memory.service import MemoryService

from .conftest import MDDOCS, audit_db, copy_tree, run_cli, write_settings

MODEL = "nomic-embed-text"
BATCH = 8  # texts per HTTP request; the pipeline commits 64 chunks (8 requests) at a time


@pytest.fixture()
def library(tmp_path, ledger, eval_present):
    lib = tmp_path / "lib"
    files = copy_tree(MDDOCS / "fastapi", lib, limit=10)
    ledger.tried(files)
    return lib


class Setup:
    def __init__(self, tmp_path, url: str, timeout_s: float = 5.0) -> None:
        self.sleeps: list[float] = []
        settings = Settings(embedder=EmbedderSettings(kind="ollama", ollama_url=url, ollama_model=MODEL,
                                                      batch_size=BATCH, ollama_timeout_s=timeout_s))
        self.embedder = OllamaEmbedder(settings.embedder, backoff_s=0.05, sleep=self._sleep)
        self.db = tmp_path / "idx.db"
        self.svc = MemoryService(settings, db_path=self.db, embedder=self.embedder)

    def _sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        time.sleep(seconds)

    def close(self) -> None:
        self.svc.close()
        self.embedder.close()


@pytest.fixture()
def make(tmp_path):
    made: list[Setup] = []

    def factory(url: str, **kw) -> Setup:
        s = Setup(tmp_path, url, **kw)
        made.append(s)
        return s

    yield factory
    for s in made:
        s.close()


def keyword_searchable(svc: MemoryService, lib) -> None:
    hits = svc.search_outcome("FastAPI", backend="keyword", top_k=5).results
    assert hits and all(h.source.startswith(str(lib)) for h in hits)
    outcome = svc.search_outcome("FastAPI", backend="hybrid", top_k=5)
    assert outcome.results, "hybrid search degrades to keyword, it does not fail"


def recovers(setup: Setup, lib, ledger, *, pending_before: int) -> None:
    """The next run after the server is healthy embeds exactly the queue and re-reads nothing."""
    summary = setup.svc.index_paths([lib])
    assert summary.embed_error == ""
    assert summary.indexed == 0 and summary.chunks_embedded == pending_before
    state = audit_db(setup.db, ledger)
    assert state.pending == set() and state.embedded == state.canonical


def test_ollama_down_then_back(library, ollama, make, ledger):
    port = ollama.port
    url = ollama.url
    ollama.stop()
    ledger.fault("Ollama down")
    setup = make(url)
    summary = setup.svc.index_paths([library])
    assert summary.indexed == 10 and summary.chunks_embedded == 0
    assert summary.embed_error.startswith(f"Cannot reach Ollama at {url}: is `ollama serve` running?")
    assert "4 attempts" in summary.embed_error
    assert setup.sleeps == [0.05, 0.1, 0.2], "retries back off exponentially"
    keyword_searchable(setup.svc, library)
    notes = setup.svc.search_outcome("FastAPI", backend="hybrid").notes
    assert any("semantic lane off" in n for n in notes)
    state = audit_db(setup.db, ledger)
    assert state.embedded == set() and state.pending == state.canonical

    ollama.start(port)  # the server comes back on its address
    recovers(setup, library, ledger, pending_before=len(state.pending))


def test_ollama_down_through_the_cli(library, tmp_path, ledger):
    from .conftest import free_port_url

    url = free_port_url()
    ledger.fault("Ollama down (CLI)")
    config = write_settings(tmp_path / "cfg", embedder={"kind": "ollama", "ollama_url": url, "ollama_model": MODEL})
    db = tmp_path / "cli.db"
    proc = run_cli(db, "index", library, config=config, timeout=120)
    # issue 30 item 6: the embedding could not finish, so the command failed (exit 3, the reason on stderr)
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    assert f"error: embedding stopped: Cannot reach Ollama at {url}" in proc.stderr
    assert "keyword search finds it; run `desktop-memory embed` once the model is available" in proc.stderr
    assert "embedding stopped" not in proc.stdout and proc.stdout.startswith("indexed 10,")
    embed = run_cli(db, "embed", config=config, timeout=120)
    assert embed.returncode == 3 and f"error: embedding stopped: Cannot reach Ollama at {url}" in embed.stderr
    assert "Traceback" not in embed.stderr
    hits = json.loads(run_cli(db, "search", "FastAPI", "--json", config=config).stdout)
    assert hits, "keyword results while the embedder is down"


def test_slow_ollama_times_out(library, ollama, make, ledger):
    ledger.fault("Ollama slow (timeout mid-run)")
    ollama.fault, ollama.fail_after, ollama.slow_s = "slow", 8, 2.0  # the 9th request (2nd batch) hangs
    setup = make(ollama.url, timeout_s=0.5)
    started = time.monotonic()
    summary = setup.svc.index_paths([library])
    assert time.monotonic() - started < 30
    assert summary.embed_error.startswith(f"Ollama at {ollama.url} did not answer within 0.5 s (4 attempts)")
    assert summary.chunks_embedded == 64, "the first batch committed, the timed-out one did not"
    state = audit_db(setup.db, ledger)
    assert len(state.embedded) == 64
    keyword_searchable(setup.svc, library)
    ollama.fail_after = None
    recovers(setup, library, ledger, pending_before=len(state.pending))


@pytest.mark.parametrize("fault, message", [
    ("500", "failed with HTTP 500 after 4 attempts: stub failure 500"),
    ("drop", "closed the connection mid-answer (4 attempts)"),
])
def test_persistent_failure_mid_batch_writes_nothing_partial(library, ollama, make, ledger, fault, message):
    """Requests 1-8 make batch 1 (committed); request 9 succeeds, 10 fails for good: batch 2 is half embedded
    on the server side, and none of it may reach the database."""
    ledger.fault(f"Ollama {fault} mid-batch (persistent)")
    ollama.fault, ollama.fail_after = fault, 9
    setup = make(ollama.url)
    summary = setup.svc.index_paths([library])
    assert message in summary.embed_error and summary.embed_error.startswith(f"Ollama at {ollama.url}")
    assert summary.chunks_embedded == 64
    requests = ollama.embed_requests()
    assert len(requests) == 9 + 4  # 9 good, then the failing one tried 4 times
    state = audit_db(setup.db, ledger)
    assert len(state.embedded) == 64
    with setup.svc.reading() as store:
        texts = dict(store.conn.execute("select id, text from chunks").fetchall())
    embedded_texts = {texts[i] for i in state.embedded}
    assert set(requests[8]).isdisjoint(embedded_texts), "texts the server answered for the failed batch: no vector"
    assert {t for r in requests[:8] for t in r} == embedded_texts
    keyword_searchable(setup.svc, library)
    ollama.fail_after = None
    recovers(setup, library, ledger, pending_before=len(state.pending))


@pytest.mark.parametrize("fault", ["500", "drop"])
def test_transient_failures_are_retried(library, ollama, make, ledger, fault):
    ledger.fault(f"Ollama {fault} (transient, retried)")
    ollama.fault, ollama.fail_after, ollama.fail_count = fault, 3, 2
    setup = make(ollama.url)
    summary = setup.svc.index_paths([library])
    assert summary.embed_error == ""
    assert setup.sleeps == [0.05, 0.1]
    state = audit_db(setup.db, ledger)
    assert state.pending == set() and summary.chunks_embedded == len(state.canonical)


def test_model_not_pulled(library, ollama, make, ledger):
    ledger.fault("Ollama model not pulled")
    ollama.models = ["all-minilm:latest"]
    setup = make(ollama.url)
    summary = setup.svc.index_paths([library])
    assert summary.embed_error == (f'Ollama at {ollama.url} has no model "{MODEL}": run `ollama pull {MODEL}` '
                                   "(or choose another model in Settings).")
    assert len(ollama.embed_inputs()) == 1 and setup.sleeps == [], "a missing model is not retried"
    keyword_searchable(setup.svc, library)
    state = audit_db(setup.db, ledger)
    ollama.models = [f"{MODEL}:latest"]
    recovers(setup, library, ledger, pending_before=len(state.pending))


def test_wrong_dimension_is_refused(library, ollama, make, ledger, tmp_path):
    ledger.fault("Ollama returns another dimension than the index", 2)
    setup = make(ollama.url)
    first = setup.svc.index_paths([library])
    assert first.embed_error == "" and first.chunks_embedded > 0
    target = sorted(library.rglob("*.md"))[0]
    target.write_text(target.read_text(encoding="utf-8") + "\n\nA new paragraph about dimensions.\n",
                      encoding="utf-8")
    ollama.dim = 48  # the model behind the name changed

    # the same app session (the embedder knows the index's dimension) ...
    summary = setup.svc.index_paths([library])
    assert summary.indexed == 1 and summary.chunks_embedded == 0
    assert "48" in summary.embed_error and "32" in summary.embed_error
    # ... and a fresh one (it does not) are both refused
    fresh = make(ollama.url)
    again = fresh.svc.index_paths([library])
    assert again.chunks_embedded == 0
    assert "holds vectors from ollama:nomic-embed-text (32-d)" in again.embed_error
    assert "(48-d)" in again.embed_error and "reembed" in again.embed_error
    state = audit_db(setup.db, ledger)
    assert {len(v) for v in state.vectors.values()} == {32 * 4}, "no 48-d vector was mixed in"
    assert state.pending, "the edited document waits for vectors"
    assert setup.svc.search_outcome("dimensions", backend="keyword").results[0].source == str(target)
    dense = fresh.svc.search_outcome("dimensions", backend="hybrid")
    assert dense.results and any("semantic lane off" in n for n in dense.notes)

    # the way out the message names: re-embed everything with the new model
    redo = fresh.svc.reembed()
    assert redo.embed_error == ""
    state = audit_db(setup.db, ledger)
    assert state.pending == set() and {len(v) for v in state.vectors.values()} == {48 * 4}
    vec = np.frombuffer(next(iter(state.vectors.values())), dtype="<f4")
    assert abs(float(np.linalg.norm(vec)) - 1.0) < 1e-4
    assert PROBE_TEXT not in {t for batch in ollama.embed_requests() for t in batch}


@pytest.mark.parametrize("fault", ["server died mid-run", "model missing"])
def test_an_index_whose_embedding_could_not_finish_fails_with_exit_3(library, ollama, tmp_path, ledger, fault):
    """Issue 30 item 6: `index` whose embedding server died (or whose model is not there) exited 0 and said
    "embedding stopped" on stdout. Now: exit 3, the reason on stderr, the JSON summary still on stdout, and keyword
    search has the text."""
    ledger.fault(f"index whose embedding could not finish: {fault}")
    model = MODEL if fault == "server died mid-run" else "not-pulled-model"
    if fault == "server died mid-run":
        ollama.fault, ollama.fail_after = "drop", 2  # two requests answer, then every connection drops
    config = write_settings(tmp_path / "cfg", embedder={"kind": "ollama", "ollama_url": ollama.url,
                                                         "ollama_model": model, "batch_size": BATCH})
    db = tmp_path / "cli.db"
    proc = run_cli(db, "index", library, "--json", config=config, timeout=180)
    assert proc.returncode == 3, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr and "error: embedding stopped: " in proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["indexed"] == 10 and summary["embed_error"]
    assert summary["embed_error"] in proc.stderr
    hits = json.loads(run_cli(db, "search", "FastAPI", "--backend", "keyword", "--json", config=config).stdout)
    assert hits, "keyword search has the text"
