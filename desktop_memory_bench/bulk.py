"""A benchmark's synthetic bulk write, on the one write route (issue 31).

Why not ``svc.writing()``: every write to a library is a job of the scheduler, a benchmark's too, so a benchmark
measures the app's own route and a removal a kill interrupted is finished first, as for any other write. Growing a
library by millions of generated rows (no files, no model) is the one write that holds the writer for a whole
block of its choosing: slices would change what is measured, and nothing else writes meanwhile. That is the named
operation ``BulkWrite`` (desktop_memory/jobs/operations.py); :func:`bulk_write` submits it and waits.

Left direct, on purpose: a benchmark that builds a seed or a copy file with ``Store(path)`` before any service opens
it (secure_delete.build, scale's base, vector_share, grow_rate, model_switch, embedded_subset) writes a file no
library service holds: there is no scheduler to route through, and nothing else can be writing it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar, cast

from desktop_memory.jobs import BULK, Job
from desktop_memory.jobs.operations import BulkWrite
from desktop_memory.store.open import sqlite_store

if TYPE_CHECKING:  # (the benchmarks import the service and the store when they run, not when they are imported)
    from desktop_memory.service import MemoryService
    from desktop_memory.store import Store

T = TypeVar("T")


def bulk_write(svc: MemoryService, work: Callable[[Store], T]) -> T:
    """``work(store)`` on the scheduler's writer lane, holding the writer throughout; returns what it returns (its
    error is raised). The store is the SQLite one: these benchmarks read SQLite's own tables."""
    job = Job(BULK, operation=BulkWrite(lambda leased: work(sqlite_store(leased, "This benchmark"))))
    return cast(T, svc.scheduler.perform(job))


__all__ = ["bulk_write"]
