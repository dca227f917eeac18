"""The one write route (issue 31 item 1): each job carries its operation, the scheduler runs it over the
LibraryWrites protocol and knows nothing else of the library, and a write asked for from inside a job runs there.
A recording stand-in for the library's writes: these are the scheduler's rules, not the store's."""

from __future__ import annotations

import ast
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import desktop_memory.jobs as jobs_pkg
from desktop_memory.jobs import COMPACT, EMBED, READ, Job, Scheduler
from desktop_memory.jobs.operations import LibraryWrites, ReadPaths
from desktop_memory.jobs.summary import Burst
from desktop_memory.models import IndexSummary


class Writes:
    """Records every write; a read runs until its cancel flag is set when ``slow``."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.slow = False
        self.reading = threading.Event()

    def index_paths(self, paths: Iterable[str], progress: Any = None, cancel: threading.Event | None = None,
                    force: bool = False, embed: bool = True, include_excluded: bool = False) -> IndexSummary:
        self.calls.append(("read", (list(paths), embed, threading.current_thread().name)))
        self.reading.set()
        while self.slow and not (cancel is not None and cancel.is_set()):
            threading.Event().wait(0.01)
        return IndexSummary(indexed=1, chunks_added=1, cancelled=bool(cancel is not None and cancel.is_set()))

    def remove_paths(self, paths: Iterable[str], progress: Any = None, cancel: Any = None,
                     exclude: bool = False) -> int:
        self.calls.append(("remove", list(paths)))
        return 0

    def embed_pending(self, progress: Any = None, cancel: Any = None) -> IndexSummary:
        self.calls.append(("embed", None))
        return IndexSummary()

    def choose_configured_model(self) -> bool:
        return False

    def reembed(self, progress: Any = None, cancel: Any = None) -> IndexSummary:
        return IndexSummary()

    def compact(self, progress: Any = None, cancel: Any = None) -> tuple[int, int]:
        return 2, 1

    def include_paths(self, paths: Iterable[str]) -> list[str]:
        return []

    def drop_model_vectors(self, model_id: str) -> int:
        return 0

    def embedding_paused(self) -> bool:
        return False

    def set_embedding_paused(self, paused: bool) -> None:
        pass

    def pending_removals(self) -> list[str]:
        return []

    def erasing_unfinished(self) -> bool:
        return False

    def removing_documents(self) -> int:
        return 0


class Tally:
    """An operation of the test's own: the scheduler runs whatever a job carries."""

    def __init__(self) -> None:
        self.ran_on = ""

    def run(self, writes: LibraryWrites, job: Job, cancel: threading.Event | None, progress: Any,
            burst: Burst) -> int:
        self.ran_on = threading.current_thread().name
        return 42

    def embed_after(self, result: Any) -> bool:
        return False


def test_a_job_runs_the_operation_it_carries_on_the_writer_lane() -> None:
    sched = Scheduler(Writes())
    try:
        tally = Tally()
        assert sched.perform(Job(COMPACT, operation=tally)) == 42
        assert tally.ran_on == "desktop-memory-writer"
    finally:
        sched.stop()


def test_a_one_shot_read_embeds_in_its_own_run_and_a_window_read_leaves_it_to_an_embedding_job() -> None:
    writes = Writes()
    sched = Scheduler(writes)
    try:
        op = ReadPaths(embed=True, include_excluded=True, embed_later=False)
        summary = sched.perform(Job(READ, ["/lib/a"], operation=op))
        assert summary.indexed == 1 and sched.wait_idle(10)
        assert writes.calls == [("read", (["/lib/a"], True, "desktop-memory-writer"))]  # no embedding job after
        sched.read(["/lib/b"]).wait(10)
        assert sched.wait_idle(10)
        assert writes.calls[1][0] == "read" and writes.calls[1][1][1] is False and writes.calls[2] == ("embed", None)
    finally:
        sched.stop()


def test_a_write_asked_for_from_inside_a_job_runs_there_instead_of_waiting_for_itself() -> None:
    writes = Writes()
    sched = Scheduler(writes)

    class Nested(Tally):
        def run(self, writes: LibraryWrites, job: Job, cancel: threading.Event | None, progress: Any,
                burst: Burst) -> int:
            inner = sched.perform(Job(READ, ["/lib/inner"], operation=ReadPaths(embed_later=False)))
            return int(inner.indexed)

    try:
        job = sched.submit(Job(COMPACT, operation=Nested()))
        assert job.wait(10) == 1 and job.finished
        assert writes.calls == [("read", (["/lib/inner"], False, "desktop-memory-writer"))]
    finally:
        sched.stop()


def test_the_waiters_own_cancel_stops_a_read_for_good() -> None:
    writes = Writes()
    writes.slow = True
    sched = Scheduler(writes)
    try:
        stop = threading.Event()
        threading.Timer(0.2, stop.set).start()
        summary = sched.perform(Job(READ, ["/lib/a"], operation=ReadPaths(embed=True, embed_later=False)),
                                cancel=stop)
        assert summary.cancelled  # (the CLI exits 130)
        assert sched.wait_idle(10) and len(writes.calls) == 1, "a read its waiter stopped is not put back"
        assert EMBED not in [j.kind for j in sched.queued()]
    finally:
        sched.stop()


def test_the_scheduler_imports_neither_the_service_nor_its_api() -> None:
    """The one circle across rooms (service_api -> jobs -> service_api) stays gone; lint-imports checks the same
    (pyproject.toml), this says it where the tests run."""
    forbidden = {"service", "service_api", "library_writes"}
    found = []
    for path in Path(jobs_pkg.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                name = node.module.split(".")[-1] if node.level else node.module.removeprefix("desktop_memory.")
                if name in forbidden:
                    found.append(f"{path.name}: {node.module}")
    assert found == []
