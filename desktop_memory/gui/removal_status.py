"""What the window says while the scheduler removes: a line per slice in the status bar, the Library caught up as
soon as every document is gone (before their text is erased from the file), and the end said once.

A removal the app finishes by itself (one a quit or a killed `remove` left unfinished, source AUTO) is said like any
removal, never silently (issue 30 item 5). Fed by :class:`~.index_jobs.IndexJobController` on the UI thread.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from ..jobs import AUTO, Job
from ..models import IndexProgress


def _names(paths: list[str]) -> str:
    if not paths:  # only the erasing of what was removed is left
        return "what was removed earlier"
    names = ", ".join(f"“{os.path.basename(p.rstrip(os.sep)) or p}”" for p in paths[:2])
    return names + (f" and {len(paths) - 2} more" if len(paths) > 2 else "")


def finishing_text(job: Job, prog: IndexProgress | None = None, done: int | None = None) -> str:
    """The status bar's line for a removal the app finishes by itself."""
    names = _names(job.paths)
    if done is not None:
        return f"Finished the removal of {names}: {done:,} documents removed (files on disk are untouched)"
    if prog is None or not prog.files_total:
        return f"Finishing the removal of {names}…"
    files = f"{prog.files_total:,} file" + ("" if prog.files_total == 1 else "s")
    if prog.phase == "erase":
        return f"Finishing the removal of {names} ({files}): erasing their text from the database file…"
    return f"Finishing the removal of {names} ({files})… {prog.files_done:,} of {prog.files_total:,} removed"


class RemovalStatus:
    """One removal after another: ``removing(line)`` for the status bar, ``removed(count, paths)`` once its
    documents are gone, ``forget(paths)`` for what the window remembers of their files."""

    def __init__(self, removing: Callable[[str], None], removed: Callable[[int, list[str]], None],
                 forget: Callable[[list[str]], None]) -> None:
        self._removing, self._removed, self._forget = removing, removed, forget
        self._removed_early: set[int] = set()  # removals whose documents are gone while their text is erased
        self._finished: set[int] = set()  # removals whose end was said

    def resumed(self, job: Job) -> None:
        """The scheduler resumed ``job`` before the window listened: said now, its progress follows."""
        self._removing(finishing_text(job))

    def progress(self, job: Job, prog: IndexProgress) -> None:
        auto = job.source == AUTO
        if prog.phase == "remove":
            self._removing(finishing_text(job, prog) if auto else
                           f"Removing {prog.files_done:,} of {prog.files_total:,} documents from the index…")
        elif prog.phase == "erase" and job.id not in self._removed_early:
            # every document is gone: the Library and the results catch up now, not after the erasing
            self._removed_early.add(job.id)
            self._forget(job.paths)
            self._removed(prog.files_done, list(job.paths))  # the job's count as of this event
            if auto:
                self._removing(finishing_text(job, prog))

    def done(self, job: Job, removed: int) -> None:
        if job.id in self._finished:
            return  # said already (it ended before this window listened, and its own event came too)
        self._finished.add(job.id)
        self._forget(job.paths)
        if job.id in self._removed_early:
            self._removed_early.discard(job.id)
            if job.source != AUTO:
                self._removing("Removed; their text is erased from the database file")
        else:
            self._removed(removed, list(job.paths))
        if job.source == AUTO:
            self._removing(finishing_text(job, done=removed))


__all__ = ["RemovalStatus", "finishing_text"]
