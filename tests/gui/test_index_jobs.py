"""The window's consumer of the scheduler's events (gui/index_jobs.py): it handles every kind of event there is
(its ``match`` ends in ``unhandled``, which mypy checks statically and which raises here at run time), and on the
real scheduler it hears typed events through a read, a removal and an embedding and turns them into its signals."""

from __future__ import annotations

import dataclasses
import typing

import pytest
from PySide6.QtCore import Slot

from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.gui.index_jobs import IndexJobController, ResumedRemoval
from desktop_memory.gui.tasks import TaskRunner
from desktop_memory.jobs import (
    AUTO,
    COMPACT,
    EMBED,
    PERSON,
    READ,
    REMOVE,
    WATCH,
    WATCHED,
    Done,
    Job,
    JobEvent,
    Progress,
    Removing,
    Scheduler,
    Started,
)
from desktop_memory.models import IndexProgress, IndexSummary
from desktop_memory.service import MemoryService
from tests.support.paced import write_folder


class HeardController(IndexJobController):
    """The real controller, remembering each event it was delivered on the UI thread."""

    def __init__(self, runner: TaskRunner) -> None:
        self.heard: list[object] = []
        super().__init__(runner)

    @Slot(object, object)
    def _deliver(self, sched: Scheduler, ev: object) -> None:
        self.heard.append(ev)
        super()._deliver(sched, ev)


@pytest.fixture
def service(tmp_path):
    svc = MemoryService(Settings(), db_path=tmp_path / "db" / "memory.db", embedder=HashEmbedder(64))
    yield svc
    svc.close()


def _example(cls: type, job: Job) -> object:
    """An event of class ``cls`` about ``job``, each field filled by its name."""
    values = {"job": job, "progress": IndexProgress("extract", 2, 1), "summary": IndexSummary(indexed=1),
              "traceback": "Traceback: boom", "why": "cancelled", "paths": ("/nowhere/x.md",), "paused": True,
              "visible": True}
    return cls(**{f.name: values[f.name] for f in dataclasses.fields(cls)})


def test_the_window_handles_every_kind_of_scheduler_event_for_every_kind_of_job(qtbot, service):
    runner = TaskRunner(max_threads=1)
    ctl = IndexJobController(runner)
    ctl.set_service(service)
    kinds = typing.get_args(JobEvent)
    assert len(kinds) == 10
    for cls in (*kinds, ResumedRemoval):
        for kind in (READ, EMBED, REMOVE, COMPACT, WATCH):
            for source in (PERSON, AUTO, WATCHED):
                ctl._deliver(service.scheduler, _example(cls, Job(kind, ["/nowhere"], source=source)))  # no raise
    ctl.set_service(None)
    runner.wait(5000)


def test_the_window_hears_typed_events_of_a_read_a_removal_and_an_embedding_from_the_real_scheduler(
        qtbot, tmp_path, service):
    runner = TaskRunner(max_threads=1)
    ctl = HeardController(runner)
    summaries: list[IndexSummary] = []
    removed: list[tuple[int, list[str]]] = []
    started: list[Job] = []
    ctl.succeeded.connect(summaries.append)
    ctl.removed.connect(lambda n, paths: removed.append((n, paths)))
    ctl.started.connect(started.append)
    ctl.set_service(service)
    folder = write_folder(tmp_path / "notes", files=5, paragraphs=2)
    ctl.add_paths([str(folder)])  # a drop: the read, then its embedding
    qtbot.waitUntil(lambda: bool(summaries) and not ctl.is_running(), timeout=30000)
    gone = str(folder / "note000.md")
    ctl.remove_paths([gone])
    qtbot.waitUntil(lambda: bool(removed), timeout=30000)
    ctl.reembed()  # Resume / Embed missing vectors: the person's embedding
    qtbot.waitUntil(lambda: len(summaries) == 2 and not ctl.is_running(), timeout=30000)
    ctl.set_service(None)
    runner.wait(5000)

    kinds = typing.get_args(JobEvent)
    assert ctl.heard and all(type(ev) in kinds for ev in ctl.heard)
    done_kinds = [ev.job.kind for ev in ctl.heard if isinstance(ev, Done)]
    assert READ in done_kinds and REMOVE in done_kinds and done_kinds.count(EMBED) == 2
    assert [ev.paths for ev in ctl.heard if isinstance(ev, Removing)] == [(gone,)]
    assert any(isinstance(ev, Progress) and ev.job.kind == READ for ev in ctl.heard)
    assert any(isinstance(ev, Started) and ev.job.kind == EMBED for ev in ctl.heard)
    # ...and the controller's own signals followed from them
    assert [j.kind for j in started] == [READ, EMBED, EMBED]
    assert summaries[0].indexed == 5 and summaries[0].chunks_embedded > 0
    assert removed == [(1, [gone])] and gone not in ctl.outcomes
