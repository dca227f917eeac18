"""The line a person reads for one watch update: what changed, which files, how long it took."""

from __future__ import annotations

import os
from collections.abc import Sequence

from ..models import IndexSummary
from ..paths import is_inside
from .update import WatchUpdate

SHOWN_PATHS = 3  # file names in one update line


def display(path: str, library: Sequence[str]) -> str:
    """``folder/relative/path`` under the innermost library folder holding it, else the full path."""
    holders = [f for f in library if is_inside(path, f)]
    if not holders:
        return path
    root = max(holders, key=len)
    return os.path.join(os.path.basename(root), os.path.relpath(path, root))


def removal_names(paths: Sequence[str]) -> str:
    """The folders of a removal finished by the watch itself (none: only the erasing of removed text is left)."""
    if not paths:
        return "removed text (erasing it from the database file)"
    more = f" (+{len(paths) - SHOWN_PATHS} more)" if len(paths) > SHOWN_PATHS else ""
    return ", ".join(paths[:SHOWN_PATHS]) + more


def summary_update(kind: str, summary: IndexSummary, library: Sequence[str], *, removed_paths: Sequence[str],
                   events: int, elapsed: float, watching: int, prefix: str = "") -> WatchUpdate:
    touched = [o.path for o in summary.outcomes if o.status in ("indexed", "failed", "skipped")]
    touched += list(removed_paths) if summary.removed else []
    parts = [f"{name} {n}" for name, n in (("indexed", summary.indexed), ("removed", summary.removed),
                                             ("failed", summary.failed), ("skipped", summary.skipped)) if n]
    shown = ", ".join(display(p, library) for p in touched[:SHOWN_PATHS])
    more = f" (+{len(touched) - SHOWN_PATHS} more)" if len(touched) > SHOWN_PATHS else ""
    what = ", ".join(parts) or "no changes"
    detail = f": {shown}{more}" if shown else ""
    from_events = f"{events} events, " if events else ""
    message = f"{prefix}{what}{detail} ({from_events}{elapsed:.2f} s)"
    for o in summary.outcomes:
        if o.status == "failed":
            message += f"\n  failed {display(o.path, library)}: {o.reason}"
    skipped = [o for o in summary.outcomes if o.status == "skipped" and o.reason]  # each says why (a few of them)
    for o in skipped[:SHOWN_PATHS]:
        message += f"\n  skipped {display(o.path, library)}: {o.reason}"
    if len(skipped) > SHOWN_PATHS:
        message += f"\n  (+{len(skipped) - SHOWN_PATHS} more skipped)"
    return WatchUpdate(kind, message, indexed=summary.indexed, removed=summary.removed,
                       unchanged=summary.unchanged, skipped=summary.skipped, failed=summary.failed,
                       events=events, paths=tuple(touched), elapsed_s=elapsed, watching=watching)
