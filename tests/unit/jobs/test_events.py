"""The scheduler's events (desktop_memory/jobs/events.py): every one it emits is one of the typed classes, with
typed fields a listener can rely on. The real service, SQLite file and scheduler; the hashing embedder."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.jobs import (
    EMBED,
    READ,
    REMOVE,
    BurstEnded,
    Done,
    Dropped,
    JobEvent,
    Paused,
    Progress,
    Queued,
    Removing,
    Started,
)
from desktop_memory.models import IndexProgress, IndexSummary
from desktop_memory.service import MemoryService
from tests.support.paced import write_folder


def test_every_event_of_an_index_a_removal_and_an_embedding_is_a_typed_class(tmp_path):
    svc = MemoryService(Settings(), db_path=tmp_path / "db" / "memory.db", embedder=HashEmbedder(64))
    try:
        sched = svc.scheduler
        heard: list[JobEvent] = []
        sched.subscribe(heard.append)
        folder = write_folder(tmp_path / "notes", files=6, paragraphs=2)
        sched.read([str(folder)])
        assert sched.wait_idle(60)  # read, then the embedding that follows by itself
        gone = str(folder / "note000.md")
        assert sched.remove([gone]).wait(60) == 1
        later = write_folder(tmp_path / "later", files=2)
        sched.read([str(folder)], force=True)
        queued = sched.read([str(later)])  # behind the first read: dropped by the removal of its folder
        sched.remove([str(later)])
        sched.cancel()  # pauses embedding
        sched.embed()  # the person's Resume
        assert sched.wait_idle(60) and queued.dropped
    finally:
        svc.close()

    classes = typing.get_args(JobEvent)
    assert heard and all(type(ev) in classes for ev in heard), {type(ev) for ev in heard} - set(classes)
    assert {Queued, Started, Progress, Done, Dropped, Removing, Paused, BurstEnded} <= {type(ev) for ev in heard}
    for ev in heard:  # each field holds what its annotation says
        match ev:
            case Progress(progress=p):
                assert isinstance(p, IndexProgress)
            case Done(summary=s) | BurstEnded(summary=s):
                assert isinstance(s, IndexSummary)
            case Removing(paths=paths):
                assert isinstance(paths, tuple) and all(isinstance(p, str) for p in paths)
            case Paused(paused=paused):
                assert isinstance(paused, bool)
    done = [(ev.job.kind, ev.summary) for ev in heard if isinstance(ev, Done)]
    reads, removals = [s for k, s in done if k == READ], [s for k, s in done if k == REMOVE]
    assert reads[0].indexed == 6 and [s.removed for s in removals] == [1, 0] and EMBED in {k for k, _s in done}
    assert [ev.paths for ev in heard if isinstance(ev, Removing)] == [(gone,), (str(later),)]
    assert [ev.paused for ev in heard if isinstance(ev, Paused)] == [True, False]
    with pytest.raises(dataclasses.FrozenInstanceError):  # a listener cannot change what the next one hears
        heard[0].job = None
