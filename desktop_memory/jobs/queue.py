"""The jobs of the one writer and the order they run in (Qt-free, no threads here).

Priorities are explicit: a settings write first (one row: the embedding pause, the model a library builds; it
must not wait behind minutes of reading), then a removal (removed means gone, at once), then a watch batch (a saved
edit is searchable within a second), then a person's drop or re-index (and a benchmark's bulk write), then
compaction and the full check, and embedding last. Embedding and reading give the writer back between slices
(scheduler.py), so a job of a higher priority never waits for more than one slice.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..models import IndexProgress, IndexSummary
from ..paths import is_inside

if TYPE_CHECKING:
    from .operations import Operation

REMOVE, WATCH, READ, COMPACT, EMBED = "remove", "watch", "index", "compact", "embed"
SETTINGS, CHECK, BULK = "settings", "check", "bulk"  # a one-row setting; `check --full`; a benchmark's bulk write
PRIORITY = {SETTINGS: -1, REMOVE: 0, WATCH: 1, READ: 2, BULK: 2, COMPACT: 3, CHECK: 3, EMBED: 9}
YIELDING = frozenset({READ, EMBED})  # jobs that step aside between slices for a job of a higher priority
CANCELLABLE = frozenset({READ, EMBED, COMPACT})  # what the person's Cancel forgets (scheduler.cancel)
QUIET = frozenset({SETTINGS})  # run without events or a burst: a one-row write is not work the person watches
PERSON, WATCHED, AUTO = "person", "watch", "auto"  # who asked: the person, the watcher, the scheduler itself
WRITER, EMBEDDER = "writer", "embedder"  # the two lanes: every write but embedding / the embedding


def lane(kind: str) -> str:
    return EMBEDDER if kind == EMBED else WRITER

_WEIGHT = {WATCHED: 0, AUTO: 1, PERSON: 2}
_ids = itertools.count(1)
WatchWork = Callable[[threading.Event], IndexSummary]  # a watch batch, planned when it runs (see Watcher)


@dataclass(eq=False)
class Job:
    """One unit of work for the writer. ``wait`` blocks until it ran, was cancelled or was dropped."""

    kind: str
    paths: list[str] = field(default_factory=list)
    force: bool = False
    source: str = PERSON
    work: WatchWork | None = None  # watch jobs only
    label: str = ""
    id: int = field(default_factory=lambda: next(_ids))
    cancel: threading.Event = field(default_factory=threading.Event)
    summary: IndexSummary = field(default_factory=IndexSummary)  # what it did so far (over its slices)
    result: Any = None
    error: BaseException | None = None
    dropped: str = ""  # why it never ran (removed folder, cancel, quit)
    slices: int = 0  # times it ran (a yielding job runs again after stepping aside)
    operation: Operation | None = None  # what it does (jobs/operations.py); the scheduler gives every job one
    stop: threading.Event | None = None  # its submitter's own cancel (a command's Ctrl+C): stops it for good
    on_progress: Callable[[IndexProgress], None] | None = None  # its submitter's progress display, if any
    _finished: threading.Event = field(default_factory=threading.Event)

    @property
    def priority(self) -> int:
        return PRIORITY[self.kind]

    @property
    def auto(self) -> bool:
        """Not the person's own request (the GUI's word for it)."""
        return self.source != PERSON

    @property
    def stopped(self) -> bool:
        """Its submitter stopped it (not the person's Cancel, not stepping aside): it is not put back."""
        return self.stop is not None and self.stop.is_set()

    @property
    def finished(self) -> bool:
        return self._finished.is_set()

    def finish(self) -> None:
        self._finished.set()

    def wait(self, timeout: float | None = None) -> Any:
        """The job's result once it ran; its error is raised; None when dropped or still running at timeout."""
        self._finished.wait(timeout)
        if self.error is not None:
            raise self.error
        return self.result

    def touches(self, folders: Iterable[str]) -> bool:
        return any(is_inside(p, f) for p in self.paths for f in folders)


class JobQueue:
    """Waiting jobs, ordered by priority then arrival. Reads with the same ``force`` merge; one embedding at most."""

    def __init__(self) -> None:
        self.jobs: list[Job] = []

    def __len__(self) -> int:
        return len(self.jobs)

    def add(self, job: Job) -> Job:
        """Queue ``job``; returns the job that will do it (a queued read or embedding it merged into)."""
        for queued in self.jobs:
            if queued.operation != job.operation:
                continue  # (a re-embedding is not an embedding; a one-shot read embeds, a drop's does not)
            if job.kind == READ == queued.kind and queued.force == job.force and queued.source == job.source:
                queued.paths += [p for p in job.paths if p not in queued.paths]
                return queued
            if job.kind == EMBED == queued.kind:  # whoever asks last with more weight owns it (the panel shows it)
                queued.source = max(queued.source, job.source, key=_WEIGHT.__getitem__)
                return queued
        self.put_back(job)
        return job

    def put_back(self, job: Job) -> None:
        at = next((i for i, q in enumerate(self.jobs) if q.priority > job.priority), len(self.jobs))
        self.jobs.insert(at, job)

    def put_back_after(self, job: Job, kind: str) -> None:
        """Back into the queue behind every waiting job of ``kind`` (a removal letting the waiting edits in), and
        behind every job of a higher priority (a settings write it stepped aside for)."""
        last = max((i for i, q in enumerate(self.jobs) if q.kind == kind or q.priority < job.priority), default=-1)
        self.jobs.insert(last + 1, job)

    def has(self, lane_of: str) -> bool:
        return any(lane(j.kind) == lane_of for j in self.jobs)

    def next(self, lane_of: str) -> Job | None:
        """The first waiting job of that lane (removed from the queue)."""
        for i, job in enumerate(self.jobs):
            if lane(job.kind) == lane_of:
                return self.jobs.pop(i)
        return None

    def first_priority(self, lane_of: str) -> int | None:
        return next((j.priority for j in self.jobs if lane(j.kind) == lane_of), None)

    def take(self, keep: Callable[[Job], bool]) -> list[Job]:
        """Remove and return the jobs ``keep`` rejects."""
        gone = [j for j in self.jobs if not keep(j)]
        self.jobs = [j for j in self.jobs if keep(j)]
        return gone

    def without_folders(self, folders: list[str]) -> list[Job]:
        """A removal: queued reads lose the paths inside ``folders`` (a read left with none is dropped and
        returned). Watch jobs plan when they run, against the library as it is then: nothing to do here."""
        emptied: list[Job] = []
        for job in list(self.jobs):
            if job.kind == READ and job.touches(folders):
                job.paths = [p for p in job.paths if not any(is_inside(p, f) for f in folders)]
                if not job.paths:
                    self.jobs.remove(job)
                    emptied.append(job)
        return emptied


__all__ = [
    "AUTO",
    "BULK",
    "CANCELLABLE",
    "CHECK",
    "COMPACT",
    "EMBED",
    "EMBEDDER",
    "PERSON",
    "PRIORITY",
    "QUIET",
    "READ",
    "REMOVE",
    "SETTINGS",
    "WATCH",
    "WATCHED",
    "WRITER",
    "YIELDING",
    "Job",
    "JobQueue",
    "WatchWork",
    "lane",
]
