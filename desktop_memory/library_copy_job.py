"""``desktop-memory copy`` on the one write route: the target library's own service runs the copy as a job of
its scheduler (jobs/operations.py ``CopyLibrary``), as every other write to a library is run.

Why not write the target directly: a write that goes around the scheduler is where an interrupted removal, a
Ctrl+C or another job's turn is handled differently (issue 31). The cost is a service opened on the target (its
connections and scheduler threads; no model is loaded: the vectors are copied, not made).
"""

from __future__ import annotations

import threading
from typing import cast

from .config import Settings
from .jobs import BULK, Job
from .jobs.operations import CopyLibrary
from .library_copy import SLICE, CopyProgress, CopySummary, check_locations
from .library_location import Location
from .models import IndexProgress


def copy_library(source: Location, target: Location, *, machine: tuple[str, str], settings: Settings | None = None,
                 allow_other_model: bool = False, progress: CopyProgress | None = None,
                 cancel: threading.Event | None = None, slice_size: int = SLICE) -> CopySummary:
    """Copy ``source`` into ``target`` (created when missing) and wait; library_copy.py says how. ``machine``:
    the copying machine (its folders are the source's unrecorded ones); ``settings``: for the target's service
    (its config folder, busy waits), the defaults when None."""
    from .service import MemoryService  # (imported when a copy runs: the command line starts light)

    check_locations(source, target)  # before the target is opened: a refused copy creates nothing

    def relay(p: IndexProgress) -> None:
        if progress is not None:
            progress(p.files_done, p.files_total)

    svc = MemoryService(settings, db_path=target)
    try:
        job = Job(BULK, operation=CopyLibrary(source, machine, allow_other_model, slice_size))
        return cast(CopySummary, svc.scheduler.perform(job, relay, cancel))
    finally:
        svc.close()


__all__ = ["copy_library"]
