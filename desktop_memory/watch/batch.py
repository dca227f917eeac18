"""One watch batch, indexed so that one bad entry costs only itself.

Why: a batch is every change of a burst (an editor's save, a branch switch). ``index_paths`` checks every named path
before it reads any (paths_guard), so one entry it refuses (a symlink loop ``la -> lb -> la``, a link leading out of
the folder) would fail the whole batch, and the real edits saved in the same burst would wait for the next start. So
such an entry is skipped with its reason and the rest of the batch is indexed. A file that vanished between the
event and the read is the pipeline's own "skipped: not found". A database problem (busy, full, read-only) still
fails the batch: it is not one entry's fault, and the watcher reports it.
"""

from __future__ import annotations

import errno
import os
import threading
from typing import TYPE_CHECKING

from ..errors import StoreError, UserError
from ..jobs import add_reads
from ..models import FileOutcome, IndexSummary

if TYPE_CHECKING:
    from ..service_api import MemoryApi

SKIPPED = "skipped"


def entry_problem(path: str, exc: BaseException) -> str:
    """Why one entry of a batch was left out, in a few words."""
    if os.path.islink(path):
        try:
            os.stat(path)
        except OSError as err:
            if err.errno == errno.ELOOP:
                return "a symbolic link loop (not followed)"
            if err.errno == errno.ENOENT:
                return "a symbolic link to nothing (not followed)"
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc)


def index_batch(service: MemoryApi, paths: list[str], cancel: threading.Event) -> IndexSummary:
    """Index ``paths`` (keyword only: the scheduler embeds what was added). One entry refused or unreadable is
    skipped with its reason; the others are indexed."""
    try:
        return service.index_paths(paths, cancel=cancel, embed=False)
    except StoreError:
        raise
    except (UserError, OSError):
        pass  # one of them (or more): each on its own, below
    summary: IndexSummary | None = None
    for path in paths:
        if cancel.is_set():
            break
        try:
            part = service.index_paths([path], cancel=cancel, embed=False)
        except StoreError:
            raise
        except (UserError, OSError) as exc:
            part = IndexSummary(skipped=1, outcomes=[FileOutcome(path, SKIPPED, entry_problem(path, exc))])
        summary = add_reads(summary, part)
    return summary or IndexSummary()


__all__ = ["entry_problem", "index_batch"]
