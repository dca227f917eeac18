"""What the scheduler tells its listeners: one small frozen class per kind of event, each with typed fields.

Why classes, not a kind string and an ``Any`` payload: a listener matches on the class (``match event: case
Done(job=job) if job.kind == REMOVE: ...``), mypy knows each field's type, and a listener that ends its ``match``
with ``case _: unhandled(event)`` is told by mypy when a new kind of event is added and it does not handle it.

Events reach listeners on the scheduler's threads (the writer or the embedding lane); :meth:`Scheduler.remove`
emits :class:`Removing` on the caller's thread. A front end with a UI thread re-posts them there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn, TypeAlias

from ..models import IndexProgress, IndexSummary
from .queue import Job


@dataclass(frozen=True)
class Queued:
    """A new job waits in the queue (not said for a request merged into a queued job)."""

    job: Job


@dataclass(frozen=True)
class Started:
    """A slice of the job started (a job that stepped aside starts again: one event per slice)."""

    job: Job


@dataclass(frozen=True)
class Progress:
    """Progress of a running job. A removal's counts are the whole job's, fixed in the event (the window reads them
    later, on its own thread, when the job's own summary may already have moved on)."""

    job: Job
    progress: IndexProgress


@dataclass(frozen=True)
class Yielded:
    """The job stepped aside for one of a higher priority; it goes on by itself after it."""

    job: Job


@dataclass(frozen=True)
class Done:
    """The job ran to its end. ``summary`` is what it did over all its slices (a removal's count is
    ``summary.removed``; a compaction's sizes are in ``job.result``)."""

    job: Job
    summary: IndexSummary


@dataclass(frozen=True)
class Failed:
    """The job raised (its exception is ``job.error``); the writer goes on with the next job."""

    job: Job
    traceback: str


@dataclass(frozen=True)
class Dropped:
    """The job never ran, or will not run again: its folder was removed, Cancel, or the library closed."""

    job: Job
    why: str


@dataclass(frozen=True)
class Removing:
    """These paths are about to be removed (said before the removal runs, so watchers stop watching them now)."""

    paths: tuple[str, ...]


@dataclass(frozen=True)
class Paused:
    """Embedding was paused by the person's Cancel (True) or resumed by their request (False)."""

    paused: bool


@dataclass(frozen=True)
class BurstEnded:
    """The burst of work that began after idle has ended (idle again, or cancelled): its one merged summary, and
    whether the person's own work was part of it (``visible``; a watch batch alone is not shown)."""

    summary: IndexSummary
    visible: bool


JobEvent: TypeAlias = Queued | Started | Progress | Yielded | Done | Failed | Dropped | Removing | Paused | BurstEnded
"""Every event the scheduler emits (``typing.get_args(JobEvent)`` lists the classes)."""


def unhandled(event: NoReturn) -> NoReturn:
    """The last case of a ``match`` over :data:`JobEvent` (``case _: unhandled(event)``): mypy reports a listener
    that forgot a kind of event (the ``assert_never`` pattern, on Python 3.10 too), and at run time it says which."""
    raise AssertionError(f"a scheduler event no listener case handles: {event!r}")


__all__ = ["BurstEnded", "Done", "Dropped", "Failed", "JobEvent", "Paused", "Progress", "Queued",
           "Removing", "Started", "Yielded", "unhandled"]
