"""The writes a job can make, and the one operation each job carries.

Why: every change to a library takes one route (issue 31): a front end (the window, ``watch``, a CLI command, MCP's
``index_path``, a benchmark) submits a :class:`~.queue.Job` to the scheduler, and the job runs its operation on the
writer (or embedding) lane. The scheduler knows the writes only through :class:`LibraryWrites`, the narrow protocol
below, which the service implements over its leases (``desktop_memory/library_writes.py``); it never imports the
service, so the two do not depend on each other.

An operation is a small frozen value: two equal ones do the same thing, so a queued job may absorb another (the
queue merges reads only when their operations are equal). ``run`` gets the job (its paths, its summary so far),
the cancel flag the scheduler polls (cancel, quit, stepping aside), the progress callback and the burst the job
belongs to. ``embed_after`` says whether embedding should follow what it did.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..models import IndexProgress, IndexSummary
from .queue import PERSON
from .summary import Burst, add_reads

if TYPE_CHECKING:
    from .queue import Job

ProgressFn = Callable[[IndexProgress], None]


class LibraryWrites(Protocol):
    """Every write a job makes to one library, and the few reads the scheduler plans with."""

    def index_paths(self, paths: Iterable[str], progress: ProgressFn | None = None,
                    cancel: threading.Event | None = None, force: bool = False, embed: bool = True,
                    include_excluded: bool = False) -> IndexSummary: ...

    def remove_paths(self, paths: Iterable[str], progress: ProgressFn | None = None,
                     cancel: threading.Event | None = None, exclude: bool = False) -> int: ...

    def embed_pending(self, progress: ProgressFn | None = None,
                      cancel: threading.Event | None = None) -> IndexSummary: ...

    def choose_configured_model(self) -> bool: ...

    def reembed(self, progress: ProgressFn | None = None,
                cancel: threading.Event | None = None) -> IndexSummary: ...

    def compact(self, progress: ProgressFn | None = None,
                cancel: threading.Event | None = None) -> tuple[int, int]: ...

    def include_paths(self, paths: Iterable[str]) -> list[str]: ...

    def drop_model_vectors(self, model_id: str) -> int: ...

    def check_full(self, progress: Callable[[str, int, int], None] | None = None,
                   cancel: threading.Event | None = None) -> list[str]: ...

    def hold_writer(self, work: Callable[[Any], Any]) -> Any: ...

    def copy_from(self, source: Any, machine: tuple[str, str], allow_other_model: bool,
                  progress: Callable[[int, int], None], cancel: threading.Event | None, slice_size: int) -> Any: ...

    # -- what the scheduler plans with (and, as settings jobs, writes) --
    def embedding_paused(self) -> bool: ...

    def set_embedding_paused(self, paused: bool) -> None: ...

    def pending_removals(self) -> list[str]: ...

    def erasing_unfinished(self) -> bool: ...

    def removing_documents(self) -> int: ...


class Operation(Protocol):
    """What a job does (see the module doc)."""

    def run(self, writes: LibraryWrites, job: Job, cancel: threading.Event | None, progress: ProgressFn,
            burst: Burst) -> Any: ...

    def embed_after(self, result: Any) -> bool: ...


@dataclass(frozen=True)
class ReadPaths:
    """Read the job's files and folders. ``embed``: embed them in the same run (a one-shot command, holding the
    writer throughout, as an index run always did). ``include_excluded``: the person named them, so a path they
    removed earlier and name exactly again comes back. ``embed_later``: embedding follows as a job of its own
    (the window's and the watcher's reads; a service call's read leaves that to its caller)."""

    embed: bool = False
    include_excluded: bool = False
    embed_later: bool = True

    def run(self, writes: LibraryWrites, job: Job, cancel: threading.Event | None, progress: ProgressFn,
            burst: Burst) -> IndexSummary:
        part = writes.index_paths(job.paths, progress=progress, cancel=cancel, force=job.force, embed=self.embed,
                                  include_excluded=self.include_excluded)
        part.cancelled = part.cancelled and (job.cancel.is_set() or job.stopped)  # stepping aside is not cancelling
        job.summary = add_reads(job.summary if job.slices > 1 else None, part)
        burst.read = add_reads(burst.read, part)
        return job.summary

    def embed_after(self, result: Any) -> bool:
        return self.embed_later and result is not None


@dataclass(frozen=True)
class RemovePaths:
    """Remove the job's paths from the index (no paths: finish a removal a quit or a kill interrupted).
    ``exclude``: the person's removal, final (what lies inside a library folder becomes an exclusion)."""

    exclude: bool = False

    def run(self, writes: LibraryWrites, job: Job, cancel: threading.Event | None, progress: ProgressFn,
            burst: Burst) -> int:
        done_before = job.summary.removed  # a removal that stepped aside before runs again for the rest

        def removal_progress(p: IndexProgress) -> None:  # counts of the whole job, carried in the event itself:
            # the window reads them later, on its own thread, when job.summary may already have moved on
            progress(dataclasses.replace(p, files_done=done_before + p.files_done,
                                         files_total=done_before + p.files_total))

        job.summary.removed += writes.remove_paths(job.paths, progress=removal_progress, cancel=cancel,
                                                   exclude=self.exclude)
        return job.summary.removed

    def embed_after(self, result: Any) -> bool:
        return False


@dataclass(frozen=True)
class EmbedPending:
    """Embed every passage still without a vector, then go on building the configured model's set beside the
    active one (issue 30). When the person asked (the job's source), the configured model is chosen first."""

    def run(self, writes: LibraryWrites, job: Job, cancel: threading.Event | None, progress: ProgressFn,
            burst: Burst) -> IndexSummary:
        if job.source == PERSON and job.slices <= 1:
            writes.choose_configured_model()
        return _embedded(job, burst, writes.embed_pending(progress=progress, cancel=cancel))

    def embed_after(self, result: Any) -> bool:
        return False


@dataclass(frozen=True)
class Reembed:
    """Embed the whole library again with the configured model (its own vectors dropped first)."""

    def run(self, writes: LibraryWrites, job: Job, cancel: threading.Event | None, progress: ProgressFn,
            burst: Burst) -> IndexSummary:
        return _embedded(job, burst, writes.reembed(progress=progress, cancel=cancel))

    def embed_after(self, result: Any) -> bool:
        return False


def _embedded(job: Job, burst: Burst, part: IndexSummary) -> IndexSummary:
    for total in (job.summary, burst.embedded):
        total.chunks_embedded += part.chunks_embedded
        total.embed_s += part.embed_s
        total.embed_error = part.embed_error or total.embed_error
    job.summary.cancelled = job.summary.cancelled or (part.cancelled and job.stopped)  # its submitter stopped it
    return job.summary


@dataclass(frozen=True)
class Compact:
    """Rebuild the file from live data only (VACUUM): removed text is erased. Returns (bytes before, after)."""

    def run(self, writes: LibraryWrites, job: Job, cancel: threading.Event | None, progress: ProgressFn,
            burst: Burst) -> tuple[int, int]:
        return writes.compact(progress=progress, cancel=cancel)

    def embed_after(self, result: Any) -> bool:
        return False


@dataclass(frozen=True)
class IncludeAgain:
    """Lift every exclusion at or below the job's paths (nothing is read: a read job follows)."""

    def run(self, writes: LibraryWrites, job: Job, cancel: threading.Event | None, progress: ProgressFn,
            burst: Burst) -> list[str]:
        return writes.include_paths(job.paths)

    def embed_after(self, result: Any) -> bool:
        return False


@dataclass(frozen=True)
class DropModelVectors:
    """Delete another model's vectors kept in the library (never the set search uses)."""

    model_id: str

    def run(self, writes: LibraryWrites, job: Job, cancel: threading.Event | None, progress: ProgressFn,
            burst: Burst) -> int:
        return writes.drop_model_vectors(self.model_id)

    def embed_after(self, result: Any) -> bool:
        return False


@dataclass(frozen=True)
class SetEmbeddingPaused:
    """Remember the person's embedding pause in the library (one row). A settings job: it runs before any other
    job, and a running read or removal steps aside for it at its next slice (scheduler.py)."""

    paused: bool

    def run(self, writes: LibraryWrites, job: Job, cancel: threading.Event | None, progress: ProgressFn,
            burst: Burst) -> None:
        writes.set_embedding_paused(self.paused)

    def embed_after(self, result: Any) -> bool:
        return False


@dataclass(frozen=True)
class ChooseConfiguredModel:
    """Point the library at the configured model (issue 30: its set is built beside the active one, or a complete
    kept set becomes active at once). A settings job, like :class:`SetEmbeddingPaused`: switching a model never
    waits behind a long read. Returns True when a build is needed."""

    def run(self, writes: LibraryWrites, job: Job, cancel: threading.Event | None, progress: ProgressFn,
            burst: Burst) -> bool:
        return writes.choose_configured_model()

    def embed_after(self, result: Any) -> bool:
        return False


@dataclass(frozen=True)
class CheckFull:
    """``check --full``: SQLite's integrity check and FTS5's own self-check, on the writer (that self-check is a
    write statement). Progress as (step name in ``current``, steps done, steps). Returns the problems found."""

    def run(self, writes: LibraryWrites, job: Job, cancel: threading.Event | None, progress: ProgressFn,
            burst: Burst) -> list[str]:
        def step(name: str, done: int, steps: int) -> None:
            progress(IndexProgress(phase="check", current=name, files_done=done, files_total=steps))

        return writes.check_full(step, cancel)

    def embed_after(self, result: Any) -> bool:
        return False


@dataclass(frozen=True, eq=False)
class BulkWrite:
    """A benchmark's synthetic bulk write (millions of generated rows, no files, no model): ``work(store)`` runs on
    the writer lane holding the writer throughout, one caller's transactions as it chooses. Why a route of its own:
    slices would change what the benchmark measures, and it runs with nothing else writing. The app never submits
    it; a benchmark does, through ``Scheduler.perform``, so even its writes take the one route."""

    work: Callable[[Any], Any]

    def run(self, writes: LibraryWrites, job: Job, cancel: threading.Event | None, progress: ProgressFn,
            burst: Burst) -> Any:
        return writes.hold_writer(self.work)

    def embed_after(self, result: Any) -> bool:
        return False


@dataclass(frozen=True)
class CopyLibrary:
    """``desktop-memory copy --from SOURCE --to`` this library: the source's documents, passages, vectors, folders
    and exclusions, slice by slice (library_copy.py). ``source`` is a file's Path or a server's URL. Progress counts
    documents (``files_done`` of ``files_total``); returns the CopySummary."""

    source: Any
    machine: tuple[str, str]
    allow_other_model: bool
    slice_size: int  # documents per transaction (library_copy.SLICE unless a test asks for smaller)

    def run(self, writes: LibraryWrites, job: Job, cancel: threading.Event | None, progress: ProgressFn,
            burst: Burst) -> Any:
        def copied(done: int, total: int) -> None:
            progress(IndexProgress(phase="copy", files_done=done, files_total=total))

        return writes.copy_from(self.source, self.machine, self.allow_other_model, copied, cancel, self.slice_size)

    def embed_after(self, result: Any) -> bool:
        return False


@dataclass(frozen=True, eq=False)
class RunWatchBatch:
    """A watch batch: planned when it runs, against the library as it is then (see watch/watcher.py)."""

    work: Callable[[threading.Event], IndexSummary]

    def run(self, writes: LibraryWrites, job: Job, cancel: threading.Event | None, progress: ProgressFn,
            burst: Burst) -> IndexSummary:
        summary = self.work(job.cancel)
        job.summary = summary
        return summary

    def embed_after(self, result: Any) -> bool:
        return isinstance(result, IndexSummary) and result.chunks_added > 0


__all__ = ["BulkWrite", "CheckFull", "ChooseConfiguredModel", "Compact", "CopyLibrary", "DropModelVectors",
           "EmbedPending", "IncludeAgain", "LibraryWrites", "Operation", "ReadPaths", "Reembed", "RemovePaths",
           "RunWatchBatch", "SetEmbeddingPaused"]
