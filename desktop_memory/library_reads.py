"""The service's reads of the library itself: counts, listings, folders, exclusions, a passage, the check.

Why apart: the service is a read façade plus a job submitter (issue 31); its search lives there, these reads of
what the library holds live here, as a mixin over the same leases, so there is one way into the store (a pooled
reader) and no forwarder per call. A removal a kill interrupted is hidden by every read until a writer finishes it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any, cast

from .ingest.model_build import ModelView
from .ingest.pipeline import ProgressFn
from .jobs import CHECK, Job
from .jobs.operations import CheckFull
from .library_location import Location, shown
from .library_writes import LibraryWrites
from .machines_view import other_machines, own_roots
from .models import (
    DocumentInfo,
    IndexProgress,
    LibraryListing,
    LibraryQuery,
    ModelVectors,
    PassageWithNeighbours,
    Stats,
)
from .paths import inside_any
from .store.protocol import LibraryStore


class LibraryReads:
    """What the library holds, each read on a pooled reader (mixed into MemoryService, which gives the leases)."""

    db_path: Location
    machine: tuple[str, str]
    writes: LibraryWrites

    def reading(self) -> AbstractContextManager[LibraryStore]:
        raise NotImplementedError

    def _perform(self, job: Job, progress: ProgressFn | None = None, cancel: threading.Event | None = None) -> Any:
        raise NotImplementedError  # (the service's: submit a job and wait for it)

    def model_view(self, store: LibraryStore) -> ModelView:
        raise NotImplementedError

    def pending_removals(self) -> list[str]:
        """Paths whose removal began and did not finish (the app quit meanwhile): the scheduler finishes them."""
        return self.writes.pending_removals()

    def erasing_unfinished(self) -> bool:
        """Removed documents' terms still wait for the FTS merge (a quit during a removal's last phase)."""
        return self.writes.erasing_unfinished()

    def exclusions(self) -> list[str]:
        """Paths removed from inside a library folder (store/folders.py): every walk and watcher leaves them out."""
        with self.reading() as store:
            return store.excluded()

    def embedding_paused(self) -> bool:
        """Whether the person paused this library's embedding (Cancel) and has not resumed it: kept in the library
        file, so a restart, a second window or `desktop-memory watch` does not start it behind their back."""
        return self.writes.embedding_paused()

    def stats(self) -> Stats:
        with self.reading() as store:
            counts = store.counts()
            model_id, dim = store.model_info()
            pending = store.pending_count()
            db_bytes = store.db_bytes()
            excluded = store.excluded()
            view = self.model_view(store)
            models = [ModelVectors(s.model_id, s.dim, s.vectors, s.bytes, s.active,
                                   pending if s.active else store.models.side_missing(s.model_id))
                      for s in store.models.sets(active_count=counts["vectors"])]
            removing = store.pending_removals()
            left = store.count_under(removing) if removing else 0
        return Stats(documents=counts["by_status"], chunks=counts["chunks"], vectors=counts["vectors"],
                     pending_vectors=pending, db_path=shown(self.db_path), db_bytes=db_bytes,
                     model_id=model_id, dim=dim, duplicates=counts["duplicates"], excluded=excluded, models=models,
                     configured_model=view.configured, search_model=view.search_model, model_note=view.note,
                     removing=removing if left else [], removing_documents=left)

    def change_stamp(self) -> tuple[int, ...]:
        """The store's change counters (:meth:`Store.change_stamp`): any committed change to documents or vectors,
        by this process or another, gives a different stamp. One small read on a pooled reader."""
        with self.reading() as store:
            return store.change_stamp()

    def documents(self) -> list[DocumentInfo]:
        with self.reading() as store:
            docs = store.list_documents()
            pending = store.pending_removals()
        return [d for d in docs if not inside_any(d.path, pending)] if pending else docs

    def library_listing(self, query: LibraryQuery, pages: Mapping[str, int],
                        eager_limit: int = 1000) -> LibraryListing:
        """The Library's first screen: every folder's summary, and the first ``pages[key]`` files of the folders
        asked for (all files when at most ``eager_limit`` match). See store/doc_listing.py."""
        with self.reading() as store:
            found = store.listing(query, pages, eager_limit)
            found.excluded = store.excluded()
            roots = store.root_machines()
            found.machines = other_machines(roots, self.machine[0])
            found.roots = [path for path, _id, _name in roots]
            return found

    def library_page(self, query: LibraryQuery, folder_key: str, offset: int, limit: int) -> list[DocumentInfo]:
        """More of one folder's files, in the query's order (the Library asks as its rows are scrolled into view)."""
        with self.reading() as store:
            return store.listing_page(query, folder_key, offset, limit)

    def indexed_under(self, folder: str) -> dict[str, tuple[int, float]]:
        """{path: (size, mtime)} of the indexed files below ``folder`` (a range of the path index, not a scan)."""
        with self.reading() as store:
            return {d.path: (d.size, d.mtime) for d in store.documents_under(folder)}

    def roots(self) -> list[str]:
        """This machine's library folders: the ones it reads, catches up and watches (machines_view.py)."""
        with self.reading() as store:
            return own_roots(store.root_machines(), self.machine[0])

    def library_folders(self) -> list[str]:
        """Every library folder, this machine's and the others' (paths are named relative to them)."""
        with self.reading() as store:
            return store.roots()

    def other_machines(self) -> dict[str, str]:
        """{library folder: machine name} of the folders other machines share in this library."""
        with self.reading() as store:
            return other_machines(store.root_machines(), self.machine[0])

    def check(self, progress: Callable[[str, int, int], None] | None = None,
              cancel: threading.Event | None = None, full: bool = False) -> list[str]:
        """The library's consistency problems ([] = healthy), on a pooled reader: search and writes go on while it
        runs (it only reads). ``progress(step, done, steps)`` names each step; ``cancel`` stops it within ~0.1 s
        (raises :class:`Cancelled`). ``full``: SQLite's ``integrity_check`` and FTS5's own self-check too, as a job
        on the writer lane (that self-check is a write statement: other writes wait for it, as for SQLite's lock)."""
        found: list[str] | None = None
        if full:  # (a job of the writer lane: like any write, it comes after a removal a kill interrupted)
            def steps(p: IndexProgress) -> None:
                if progress is not None:
                    progress(p.current, p.files_done, p.files_total)

            found = cast(list[str], self._perform(Job(CHECK, operation=CheckFull()), steps, cancel))
        with self.reading() as store:
            problems = _removal_problems(store)
            return problems + (store.check_integrity(progress, cancel, full=False) if found is None else found)

    def passage(self, chunk_id: int, neighbours: int = 1) -> PassageWithNeighbours | None:
        """One stored passage by id with the passages around it in its file (None: no such id, e.g. removed)."""
        with self.reading() as store:
            found = store.passage(chunk_id, neighbours)
            if found is not None and inside_any(found.passage.source, store.pending_removals()):
                return None  # being removed (an interrupted removal the next writer finishes): as good as gone
            return found



def _removal_problems(store: LibraryStore) -> list[str]:
    """An interrupted removal is reported by `check` until a command that writes finishes it."""
    pending = store.pending_removals()
    left = store.count_under(pending) if pending else 0
    if not left:  # (its documents all gone: only its closing commit, or the erasing, is left; any writer ends it)
        return []
    return [f"removal in progress: {', '.join(pending)} ({left:,} document(s) still to remove); any command that "
            "writes (e.g. `desktop-memory compact`), the window or `watch` finishes it"]


__all__ = ["LibraryReads"]
