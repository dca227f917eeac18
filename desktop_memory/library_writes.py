"""Every write to one library, over the service's leases: what the scheduler's jobs run (jobs/operations.py).

Why here, once: a write used to be made two ways (a job of the scheduler, or a direct call of the service from a
one-shot command), and a removal a kill interrupted was finished only where the scheduler ran. Now the service
submits a job for every write and the job calls these. Each loop takes the writer for short transactions only
(``writing()``), so a saved edit or a removal commits between two slices of another job. The two one-row settings
writes (the embedding pause, the model target of ``set_embedder_settings``) are jobs too, of the top priority: a
running read steps aside for them at its next slice (jobs/queue.py ``SETTINGS``). Nothing else in the app takes the
writer: ``check --full`` is a job (:meth:`check_full`); two named operations hold it throughout, ``copy`` into this
library (:meth:`copy_from`, each slice its own transaction) and a benchmark's synthetic bulk write
(:meth:`hold_writer`, jobs/operations.py ``BulkWrite``).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from .config import Settings
from .embed.base import Embedder
from .embed.identity import settings_json
from .errors import Cancelled, UserError
from .ingest.model_build import ModelView, build_beside
from .ingest.pipeline import ProgressFn, embed_queue, index_paths
from .ingest.walk import printable_path
from .jobs.operations import LibraryWrites as WritesProtocol
from .library_copy import CopySummary, copy_into
from .library_location import Location
from .machines_view import refuse_others
from .models import IndexProgress, IndexSummary
from .paths import normalise
from .paths_guard import checked_path
from .store.protocol import LibraryStore

EMBEDDING_PAUSED = "embedding_paused"  # meta key: "1" after the person's Cancel, until Resume
REMOVE_SLICE = 100  # documents removed per transaction (~1,000 passages: well under a second at 1M)


class Leases(Protocol):
    """What the writes need of the service: its leases, its settings and its embedders."""

    @property
    def settings(self) -> Settings: ...

    @property
    def embedder(self) -> Embedder: ...

    @property
    def machine(self) -> tuple[str, str]: ...

    @property
    def db_path(self) -> Location: ...

    def writing(self) -> AbstractContextManager[LibraryStore]: ...

    def reading(self) -> AbstractContextManager[LibraryStore]: ...

    def model_view(self, store: LibraryStore) -> ModelView: ...


class LibraryWrites:
    """The write loops of one library (see the module doc); implements jobs.operations.LibraryWrites."""

    def __init__(self, library: Leases) -> None:
        self._lib = library

    # ---------- reading files ----------
    def index_paths(self, paths: Iterable[str | Path], progress: ProgressFn | None = None,
                    cancel: threading.Event | None = None, force: bool = False, embed: bool = True,
                    include_excluded: bool = False) -> IndexSummary:
        """Index files/folders. A path inside a library folder that reaches outside it (a symlink, with symlinks
        off) is refused before anything is read (paths_guard). What the person removed from inside a library
        folder stays out (store/folders.py); ``include_excluded`` includes a path named exactly again."""
        lib = self._lib
        with lib.writing() as store:
            roots = store.roots()
            refused = refuse_others([str(p) for p in paths], store.root_machines(), lib.machine[0])
            if refused:  # another machine's folder: it reads and watches its own (machines_view.py)
                raise UserError(refused)
            follow = lib.settings.ingest.follow_symlinks
            named = [checked_path(p, roots, follow_symlinks=follow, may_add=True) for p in paths]
            # new passages get vectors of the set search uses (the library's own model, where it is available)
            embedder = lib.model_view(store).search_embedder if embed else None
            summary = index_paths(store, named, lib.settings, embedder, progress=progress, cancel=cancel,
                                  force=force, embed=embed and embedder is not None,
                                  include_excluded=include_excluded)
        if embedder is not None and summary.chunks_embedded:
            self.remember_model()
        return summary

    def include_paths(self, paths: Iterable[str | Path]) -> list[str]:
        """Include again: every exclusion at or below ``paths`` is lifted (nothing is read here)."""
        asked = [normalise(p) for p in paths]
        with self._lib.writing() as store:
            return store.lift_exclusions(asked, under=True)

    # ---------- embedding ----------
    def embed_pending(self, progress: ProgressFn | None = None,
                      cancel: threading.Event | None = None) -> IndexSummary:
        """The set search uses first (new passages, with its own model where available), then the configured
        model's set being built beside it (issue 30): that one becomes the active set when complete. A cancel
        returns a summary marked cancelled (vectors committed so far stay)."""
        summary = IndexSummary()
        lib = self._lib
        try:
            with lib.reading() as store:
                view = lib.model_view(store)
                waiting = store.pending_count() if store.model_info()[0] is not None else 1
            if view.search_embedder is not None and waiting:  # (a model server is not contacted for nothing)
                embed_queue(lib.reading, lib.writing, view.search_embedder, progress=progress, cancel=cancel,
                            summary=summary)
                self.remember_model()
            if view.building:
                build = IndexSummary()
                try:
                    build_beside(lib.reading, lib.writing, lib.embedder, settings_json(lib.settings.embedder),
                                 progress=progress, cancel=cancel, summary=build)
                finally:
                    summary.chunks_embedded += build.chunks_embedded
                    summary.embed_s += build.embed_s
                    summary.embed_error = build.embed_error or summary.embed_error
        except Cancelled:
            summary.cancelled = True
        return summary

    def reembed(self, progress: ProgressFn | None = None, cancel: threading.Event | None = None) -> IndexSummary:
        """Embed the whole library again with the configured embedder: its own vectors are dropped first."""
        wanted = self._lib.embedder.model_id
        with self._lib.writing() as store:
            active, _ = store.model_info()
            if active is None or active == wanted:
                store.reset_vectors()
            else:
                if wanted in {s.model_id for s in store.models.sets()}:
                    store.models.drop(wanted)
                store.models.set_target(wanted)
        return self.embed_pending(progress=progress, cancel=cancel)

    def choose_configured_model(self) -> bool:
        """Build the configured model's vectors beside the active set's when they are another model's (issue 30).
        Returns True when such a build is needed; False when none is (the same model, no vectors yet, or a
        complete set of it kept from before: switched to at once)."""
        wanted = self._lib.embedder.model_id
        with self._lib.writing() as store:
            active, _ = store.model_info()
            if active is None or active == wanted:
                store.models.set_target(None)  # a build of another model stops at its next slice (kept)
                return False
            kept = {s.model_id: s for s in store.models.sets()}
            store.models.set_target(wanted)
            if wanted in kept and not store.models.side_missing(wanted):
                store.models.activate(wanted)  # its vectors are all still here: switching back is instant
                switched = True
            else:
                switched = False
        if switched:
            self.remember_model()
        return not switched

    def drop_model_vectors(self, model_id: str) -> int:
        with self._lib.writing() as store:
            return store.models.drop(model_id)

    def check_full(self, progress: Callable[[str, int, int], None] | None = None,
                   cancel: threading.Event | None = None) -> list[str]:
        """SQLite's ``integrity_check`` and FTS5's own self-check (a write statement: it needs the writer)."""
        with self._lib.writing() as store:
            return store.check_integrity(progress, cancel, full=True)

    def hold_writer(self, work: Callable[[Any], Any]) -> Any:
        """``work(store)`` holding the writer throughout: a benchmark's synthetic bulk write only (BulkWrite)."""
        with self._lib.writing() as store:
            return work(store)

    def copy_from(self, source: Location, machine: tuple[str, str], allow_other_model: bool,
                  progress: Callable[[int, int], None], cancel: threading.Event | None,
                  slice_size: int) -> CopySummary:
        """Another library copied into this one (library_copy.py), holding the writer throughout: its slices are
        transactions of their own, so another process's writer takes turns between them."""
        with self._lib.writing() as store:
            return copy_into(source, store, self._lib.db_path, machine=machine, allow_other_model=allow_other_model,
                             progress=progress, cancel=cancel, slice_size=slice_size)

    def remember_model(self) -> None:
        """Record the configured embedder's settings with the library's active set when they made it, so the
        library can embed its queries with it again under another configured model."""
        wanted = self._lib.embedder.model_id
        recorded = settings_json(self._lib.settings.embedder)
        with self._lib.reading() as store:
            if store.model_info()[0] != wanted or store.models.settings_of(wanted) == recorded:
                return
        with self._lib.writing() as store:
            if store.model_info()[0] == wanted:
                store.models.record_active(recorded)

    def embedding_paused(self) -> bool:
        with self._lib.reading() as store:
            return store.get_meta(EMBEDDING_PAUSED) == "1"

    def set_embedding_paused(self, paused: bool) -> None:
        with self._lib.writing() as store:
            store.set_meta(EMBEDDING_PAUSED, "1" if paused else "0")

    # ---------- removing ----------
    def remove_paths(self, paths: Iterable[str | Path], progress: ProgressFn | None = None,
                     cancel: threading.Event | None = None, exclude: bool = False) -> int:
        """Remove files, or whole folders, from the index (the files on disk are never touched); returns how many
        documents went. No paths: finish a removal a quit or a kill interrupted.

        Final, and never holding the writer for long (issue 26): one short transaction records the removal in the
        library and forgets the folders (a watcher or the next start cannot bring them back); then the documents go
        in slices of ``REMOVE_SLICE``, one transaction each, and the FTS index is merged in slices
        (``Eraser.merge_step``), the writer free between slices. ``cancel`` stops between slices: what is left
        stays recorded and is finished by the next removal (the scheduler makes one at start). Removed means gone
        once it returns: the FTS index merged and the WAL truncated (docs/PRIVACY.md).

        ``exclude``: the person's removal, not a file gone from disk: a library folder leaves the library, and a
        folder or file inside one becomes an exclusion, recorded in the same transaction as the intent."""
        asked = [printable_path(normalise(p)) for p in paths]
        with self._lib.writing() as store:
            # a typo (no such path, nothing indexed there) is not recorded as an exclusion
            keep_out = [p for p in asked if os.path.lexists(p) or store.count_under([p])] if exclude else []
            pending = store.begin_removal(asked, exclude=keep_out) if asked else store.pending_removals()
            total = store.count_under(pending) if pending else 0
        removed, t0 = 0, time.perf_counter()

        def report(phase: str, current: str = "") -> None:
            if progress is not None:
                progress(IndexProgress(phase=phase, files_total=total, files_done=removed, current=current,
                                       elapsed_s=time.perf_counter() - t0))

        while pending:
            if cancel is not None and cancel.is_set():
                return removed
            with self._lib.writing() as store:
                ids = store.removal_slice(pending, REMOVE_SLICE)
                if ids:
                    removed += store.remove_documents(ids)
                else:
                    store.end_removal(pending)
                    pending = []
            report("remove", pending[0] if pending else "")
            time.sleep(0.001)  # the lock is not fair: give a waiting writer (an embedding's commit) its turn
        report("erase")  # every document is gone (the Library and results catch up now), however long erasing takes
        while True:  # removed means gone: the FTS index merged slice by slice, then the WAL truncated
            if cancel is not None and cancel.is_set():
                return removed
            with self._lib.writing() as store:
                if not store.merge_step():
                    store.checkpoint_erased()
                    break
            report("erase")
            time.sleep(0.001)
        report("done")
        return removed

    def pending_removals(self) -> list[str]:
        with self._lib.reading() as store:
            return store.pending_removals()

    def erasing_unfinished(self) -> bool:
        """Removed documents' terms still wait for the FTS merge (a quit during a removal's last phase)."""
        with self._lib.reading() as store:
            return bool(store.get_meta("fts_optimize_pending"))

    def removing_documents(self) -> int:
        """Documents an unfinished removal has still to remove."""
        with self._lib.reading() as store:
            pending = store.pending_removals()
            return store.count_under(pending) if pending else 0

    # ---------- compaction ----------
    def compact(self, progress: ProgressFn | None = None,
                cancel: threading.Event | None = None) -> tuple[int, int]:
        """"Compact and erase": rebuild the database from live data only (VACUUM). Progress in per mille (phase
        "merge", then "compact"); a cancel raises Cancelled and SQLite rolls the VACUUM back. The FTS index is
        merged first in slices, the writer free between them; the VACUUM itself holds the writer (readers go on)."""
        t0 = time.perf_counter()

        def report(fraction: float, phase: str = "compact") -> None:
            if progress is not None:
                progress(IndexProgress(phase=phase, files_total=1000, files_done=int(fraction * 1000),
                                       elapsed_s=time.perf_counter() - t0))

        while True:  # the FTS index merged in slices (what the VACUUM would otherwise do holding the writer)
            if cancel is not None and cancel.is_set():
                raise Cancelled("compaction cancelled: the library is as it was")
            with self._lib.writing() as store:
                if not store.merge_step(always=True):
                    break
            report(0.0, "merge")
        with self._lib.writing() as store:
            return store.compact(report, cancel)


def _implements_protocol(writes: LibraryWrites) -> WritesProtocol:
    """Never called: mypy checks here that the scheduler's protocol is what this class offers."""
    return writes


__all__ = ["EMBEDDING_PAUSED", "REMOVE_SLICE", "LibraryWrites"]
