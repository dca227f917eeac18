"""Shared machinery for the robustness suite (issue 5): real files, real processes, real faults.

- ``ledger``: counts files tried, faults injected, queries fuzzed and data lost; printed at the end of the run and
  written as JSON to ``$DM_ROBUSTNESS_COUNTS`` (``scripts/robustness_report.py`` reads it).
- ``run_cli`` / ``spawn_cli`` (tests/support/cli.py): the real ``python -m desktop_memory.cli`` in a subprocess, with
  its own settings file.
- ``audit_db``: what must hold after any fault (integrity, chunks ⇔ FTS rows, vectors ⇔ live chunks, the queue).
- ``AUDIT``: one process-wide audit hook (``sys.addaudithook``) recording opens, directory listings and socket
  connections while a test asks it to.
- ``mounted_tmpfs`` (tests/support/filesystems.py): a real small (or read-only) file system, as root.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import apsw
import pytest

from tests.conftest import EVAL, MDDOCS, PDFS
from tests.support.cli import (  # noqa: F401  (the suite's tests import them from here)
    REPO,
    alive,
    children_of,
    cli_cmd,
    cli_env,
    finish,
    kill9,
    run_cli,
    spawn_cli,
    write_settings,
)
from tests.support.filesystems import IS_ROOT, mounted_tmpfs, remount_ro  # noqa: F401
from tests.support.folders import copy_tree  # noqa: F401
from tests.support.ollama_server import OllamaStub
from tests.support.waiting import wait_for  # noqa: F401  (the suite imports it from here)

# ---------------------------------------------------------------------------------------------------------------
# the ledger: what the suite tried


class Ledger:
    def __init__(self) -> None:
        self.files: set[tuple[str, str]] = set()
        self.faults: collections.Counter[str] = collections.Counter()
        self.queries = 0
        self.lost = 0
        self.checks = 0  # audit_db passes (database verified after a fault)
        self.current = ""
        self.outcomes: collections.Counter[str] = collections.Counter()  # passed / failed / skipped tests

    def tried(self, paths) -> None:
        for p in paths:
            self.files.add((self.current, str(p)))

    def tried_folder(self, folder: Path) -> None:
        self.tried(str(p) for p in Path(folder).rglob("*") if not p.is_dir())

    def fault(self, kind: str, n: int = 1) -> None:
        self.faults[kind] += n

    def fuzzed(self, n: int = 1) -> None:
        self.queries += n

    def data_lost(self, n: int) -> None:
        self.lost += max(0, int(n))

    def as_dict(self) -> dict[str, Any]:
        return {
            "files_tried": len(self.files),
            "faults_injected": sum(self.faults.values()),
            "faults_by_kind": dict(sorted(self.faults.items())),
            "queries_fuzzed": self.queries,
            "databases_verified": self.checks,
            "data_lost": self.lost,
            "tests": dict(sorted(self.outcomes.items())),
        }


LEDGER = Ledger()


@pytest.fixture()
def ledger(request) -> Ledger:
    LEDGER.current = request.node.nodeid
    return LEDGER


def pytest_runtest_logreport(report) -> None:
    if "tests/robustness/" not in report.nodeid.replace("\\", "/"):
        return
    if report.when == "call" or (report.when == "setup" and not report.passed):
        LEDGER.outcomes[report.outcome] += 1


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    counts = LEDGER.as_dict()
    if not (LEDGER.files or LEDGER.faults or LEDGER.queries):
        return
    terminalreporter.section("robustness counts")
    for key in ("files_tried", "faults_injected", "queries_fuzzed", "databases_verified", "data_lost"):
        terminalreporter.write_line(f"{key:<20} {counts[key]}")
    for kind, n in counts["faults_by_kind"].items():
        terminalreporter.write_line(f"  fault {kind:<38} {n}")
    out = os.environ.get("DM_ROBUSTNESS_COUNTS")
    if out:
        Path(out).write_text(json.dumps(counts, indent=2), encoding="utf-8")


@pytest.fixture()
def hash_config(tmp_path) -> Path:
    """CLI settings with the fast, deterministic test embedder (kind = "hash", 64-d)."""
    return write_settings(tmp_path / "config-hash", embedder={"kind": "hash"})


@pytest.fixture()
def local_config(tmp_path) -> Path:
    """CLI settings with the real bundled ONNX model (all-MiniLM-L6-v2 int8)."""
    return write_settings(tmp_path / "config-local", embedder={"kind": "local"})


# ---------------------------------------------------------------------------------------------------------------
# looking inside a database


class Probe:
    """A read-only look at a database another process is writing (what a second app instance would see)."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.conn: apsw.Connection | None = None

    def _open(self) -> apsw.Connection | None:
        if self.conn is None and self.db.exists():
            try:
                conn = apsw.Connection(str(self.db), flags=apsw.SQLITE_OPEN_READONLY)
                conn.setbusytimeout(2000)
                conn.execute("select count(*) from chunks").fetchone()
                self.conn = conn
            except apsw.Error:
                return None
        return self.conn

    def counts(self) -> dict[str, int]:
        conn = self._open()
        if conn is None:
            return {"docs": 0, "indexed": 0, "chunks": 0, "embedded": 0, "pending": 0}
        try:
            docs, indexed = conn.execute(
                "select count(*), coalesce(sum(status = 'indexed'), 0) from documents").fetchone()
            chunks, embedded, pending = conn.execute(
                "select count(*), coalesce(sum(embedded), 0), "
                "coalesce(sum(embedded = 0 and dup_of is null), 0) from chunks").fetchone()
        except apsw.Error:
            return {"docs": 0, "indexed": 0, "chunks": 0, "embedded": 0, "pending": 0}
        return {"docs": docs, "indexed": indexed, "chunks": chunks, "embedded": embedded, "pending": pending}

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


@dataclass
class DbState:
    docs: dict[str, tuple[str, str, int]]  # path -> (status, error, n_chunks)
    canonical: set[int]
    duplicates: set[int]
    embedded: set[int]
    pending: set[int]
    vectors: dict[int, bytes] = field(repr=False)
    chunk_pages: dict[str, list[int | None]] = field(repr=False)

    def indexed_paths(self) -> set[str]:
        return {p for p, (status, _, _) in self.docs.items() if status == "indexed"}


def audit_db(db: Path, ledger: Ledger | None = None) -> DbState:
    """Open the database as the app does and assert everything that must hold after any fault."""
    from desktop_memory.store import Store

    store = Store(db)  # the app's own open: WAL recovery, vec extension, migrations
    try:
        conn = store.conn
        assert conn.execute("pragma integrity_check").fetchone()[0] == "ok"
        assert store.check_integrity() == []
        canonical = {r[0] for r in conn.execute("select id from chunks where dup_of is null")}
        duplicates = {r[0] for r in conn.execute("select id from chunks where dup_of is not null")}
        fts = {r[0] for r in conn.execute("select id from chunks_fts_docsize")}
        assert fts == canonical, "chunks and FTS rows must agree one to one"
        embedded = {r[0] for r in conn.execute("select id from chunks where embedded = 1")}
        vectors = dict(conn.execute("select id, embedding from chunk_vectors").fetchall())
        bits = {r[0] for r in conn.execute("select id from chunk_vector_bits")}
        assert set(vectors) == embedded == bits, "a vector exists exactly for each chunk flagged embedded"
        assert embedded <= canonical, "every vector belongs to a live, canonical chunk"
        pending = {r[0] for r in conn.execute("select id from chunks where embedded = 0 and dup_of is null")}
        assert pending == canonical - embedded
        assert store.pending_count() == len(pending)
        orphans = conn.execute("select count(*) from chunks where doc_id not in (select id from documents)")
        assert orphans.fetchone()[0] == 0
        dangling = conn.execute(
            "select count(*) from chunks d where d.dup_of is not null and not exists "
            "(select 1 from chunks o where o.id = d.dup_of and o.dup_of is null)").fetchone()[0]
        assert dangling == 0, "every collapsed duplicate points at a live canonical chunk"
        docs = {p: (s, e, n) for p, s, e, n in conn.execute("select path, status, error, n_chunks from documents")}
        per_doc = dict(conn.execute(
            "select d.path, count(c.id) from documents d left join chunks c on c.doc_id = d.id group by d.id"))
        for path, (status, _, n) in docs.items():
            assert per_doc.get(path, 0) == n, f"{path}: n_chunks {n} but {per_doc.get(path)} chunks stored"
            if status != "indexed":
                assert n == 0 or per_doc.get(path, 0) == n, path
        pages: dict[str, list[int | None]] = collections.defaultdict(list)
        for path, page in conn.execute(
                "select d.path, c.page from chunks c join documents d on d.id = c.doc_id order by c.id"):
            pages[path].append(page)
    finally:
        store.close()
    if ledger is not None:
        ledger.checks += 1
    return DbState(docs, canonical, duplicates, embedded, pending, vectors, dict(pages))


# ---------------------------------------------------------------------------------------------------------------
# corpora


@pytest.fixture(scope="session")
def eval_present() -> Path:
    assert (PDFS / "manifest.tsv").is_file() and MDDOCS.is_dir(), f"test data expected at {EVAL}"
    return EVAL


# ---------------------------------------------------------------------------------------------------------------
# a fake Ollama (a real HTTP server) with scripted faults


class ScriptedOllama(OllamaStub):
    """OllamaStub with faults scripted by position: embed requests number ``fail_after + 1`` to
    ``fail_after + fail_count`` (all later ones when ``fail_count`` is None; the one-text dimension probe does not
    count) get ``fault``: "drop" (half an answer, then the socket closes), "500", or "slow" (``slow_s`` seconds
    before answering). ``start(port)`` can come back on the same port after ``stop()`` (a restarted server)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fail_after: int | None = None
        self.fail_count: int | None = None
        self.fault = "drop"
        self.slow_s = 0.0
        self._base_delay = 0.0

    def embed_requests(self) -> list[list[str]]:
        return [b for b in self.embed_inputs() if b != ["dimension probe"]]

    def _scripted(self) -> bool:
        if self.fail_after is None:
            return False
        n = len(self.embed_requests())  # this request is already logged
        return n > self.fail_after and (self.fail_count is None or n <= self.fail_after + self.fail_count)

    def _take(self, attr: str) -> bool:
        wanted = {"drop": "drop_connection_next_n", "500": "fail_next_n"}.get(self.fault)
        if attr == wanted and self._scripted():
            return True
        return super()._take(attr)

    @property
    def delay_s(self) -> float:  # read by the handler after logging the request
        if self.fault == "slow" and self._scripted():
            return self.slow_s
        return self._base_delay

    @delay_s.setter
    def delay_s(self, value: float) -> None:
        self._base_delay = value

    def start(self, port: int = 0) -> ScriptedOllama:
        if self._server is not None:
            return self
        from tests.support.ollama_server import _make_handler, _QuietServer

        self._stopping.clear()
        server = _QuietServer(("127.0.0.1", port), _make_handler(self))
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="OllamaStub", daemon=True)
        self._thread.start()
        return self


@pytest.fixture()
def ollama() -> Iterator[ScriptedOllama]:
    with ScriptedOllama(dim=32) as stub:
        yield stub


def free_port_url() -> str:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


# ---------------------------------------------------------------------------------------------------------------
# audit hook: opens, listings, sockets


class _Audit:
    EVENTS: ClassVar[frozenset[str]] = frozenset({
        "open", "os.scandir", "os.listdir", "socket.connect", "socket.getaddrinfo", "socket.sendto",
        "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
    })

    def __init__(self) -> None:
        self.active = False
        self.log: list[tuple[str, Any]] = []
        self.lock = threading.Lock()

    def hook(self, event: str, args: tuple) -> None:
        if not self.active or event not in self.EVENTS:
            return
        if event in ("socket.connect", "socket.sendto"):
            first = args[1] if len(args) > 1 else None  # (socket, address)
        else:
            first = args[0] if args else None  # a path, or getaddrinfo's host
        if isinstance(first, bytes):
            first = os.fsdecode(first)
        elif isinstance(first, os.PathLike):
            first = os.fspath(first)
        with self.lock:
            self.log.append((event, first))

    @contextlib.contextmanager
    def recording(self) -> Iterator[list[tuple[str, Any]]]:
        with self.lock:
            self.log = []
        self.active = True
        try:
            yield self.log
        finally:
            self.active = False


AUDIT = _Audit()
sys.addaudithook(AUDIT.hook)
