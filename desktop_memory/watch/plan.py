"""Turn changed paths into work for the indexer: which files to (re)index, which paths are gone.

Every decision about what a walk would skip is asked of ``ingest/walk.py`` (``name_skip_reason``, ``walk_paths``);
nothing here knows a rule of its own. The catch-up scan compares a walk of a folder (``stat`` only, nothing
opened) with the sizes and mtimes the index holds, so after a restart only what differs is read again.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..config import IngestSettings
from ..ingest.walk import gone_as_file, name_skip_reason, walk_paths
from ..paths import is_inside


@dataclass
class Plan:
    """Files to index (the incremental path skips unchanged ones by hash) and paths to remove from the index."""

    index: list[str] = field(default_factory=list)
    remove: list[str] = field(default_factory=list)
    ignored: int = 0  # changed paths the walk's rules leave out (.git/, hidden, ignored patterns, outside)
    checked: int = 0  # files the walk compared (not what is excluded, nor a removal's documents still listed)

    def __bool__(self) -> bool:
        return bool(self.index or self.remove)


def outermost(folders: Iterable[str]) -> list[str]:
    """The folders not inside another one of them: one recursive watch each covers the rest."""
    result: list[str] = []
    for f in sorted(set(folders), key=len):
        if not any(is_inside(f, top) for top in result):
            result.append(f)
    return sorted(result)


def plan_changes(changes: Mapping[str, bool], roots: Sequence[str], settings: IngestSettings,
                 exclude: Collection[str] = (), excluded: Collection[str] = ()) -> Plan:
    """Work for a batch of changed paths (path → reported as a folder) under the watched ``roots``.

    A path counts when at least one root that holds it would reach it in a walk. A path that exists is indexed
    (a folder: every file a walk of it yields); one that is gone is removed (a folder: everything under it). A
    root itself is never removed because of an event: a folder on an unplugged drive keeps its index.
    ``exclude``: exact paths never indexed (the library's own files); ``excluded``: what the person removed from
    the library (store/folders.py), left out with everything below it.
    """
    plan = Plan()
    queued: set[str] = set()
    for path in sorted(changes):
        holders = [r for r in roots if is_inside(path, r)]
        if path in exclude or not holders or path in roots or any(is_inside(path, x) for x in excluded):
            plan.ignored += path not in roots
            continue
        if all(name_skip_reason(path, r, settings) is not None for r in holders):
            plan.ignored += 1
            continue
        if os.path.isdir(path):
            files = list(_files_in(path, settings, excluded))
            for file in files:
                if file not in queued:
                    queued.add(file)
                    plan.index.append(file)
            if not files:  # a file replaced by an empty folder: its old document goes (nothing under it is lost)
                plan.remove.append(path)
        elif os.path.lexists(path):
            if path not in queued:
                queued.add(path)
                plan.index.append(path)
        else:
            plan.remove.append(path)
    return plan


def _files_in(folder: str, settings: IngestSettings, excluded: Collection[str]) -> Iterable[str]:
    """Files a walk of ``folder`` yields, except those left out for their name (named explicitly, those would be
    indexed); files skipped for what they are (binary, too large) still go to indexing, which records why."""
    for entry in walk_paths([folder], settings, excluded):
        if entry.is_dir:
            continue
        if entry.skip_reason is None or name_skip_reason(entry.path, folder, settings) is None:
            yield entry.path


def catch_up_plan(root: str, known: Mapping[str, tuple[int, float]], settings: IngestSettings,
                  progress: Callable[[int], None] | None = None, cancel: threading.Event | None = None,
                  every_s: float = 1.0, excluded: Collection[str] = ()) -> Plan | None:
    """What changed under ``root`` since the index last saw it: ``known`` maps indexed paths under the root to
    their recorded (size, mtime). New or differing files are indexed; recorded files that are gone are removed.
    ``progress(files seen)`` every ``every_s`` (a 50,000-file folder takes seconds); None when ``cancel`` stopped
    the walk (nothing is planned from half a walk: the missing half would look deleted). ``excluded``: what the
    person removed from the library, never walked (a start does not read a removed folder again)."""
    plan = Plan()
    seen: set[str] = set()
    last = time.monotonic()
    for entry in walk_paths([root], settings, excluded):
        if entry.is_dir:
            continue
        seen.add(entry.path)
        if len(seen) % 256 == 0:
            if cancel is not None and cancel.is_set():
                return None
            if progress is not None and time.monotonic() - last >= every_s:
                last = time.monotonic()
                progress(len(seen))
        if known.get(entry.path) == (entry.size, entry.mtime):
            continue
        if entry.skip_reason is not None and name_skip_reason(entry.path, root, settings) is not None:
            plan.ignored += 1
            continue
        plan.index.append(entry.path)
    # a file now a folder: indexing the files inside it removes the old entry (pipeline.reconcile_kind_changes);
    # removing it here would take them too (removal runs after indexing), so only an emptied one is removed here
    holding = {os.path.dirname(p) for p in seen}
    plan.remove = [p for p in sorted(known) if p not in seen and gone_as_file(p)
                   and not (os.path.isdir(p) and any(is_inside(h, p) for h in holding))]
    plan.checked = len(seen)
    return plan
