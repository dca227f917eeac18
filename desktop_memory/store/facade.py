"""What the SQLite ``Store`` and the PostgreSQL ``PgStore`` do the same way, written once: the store surface
(store/protocol.py ``LibraryStore``) over a store's parts.

A store is a facade over parts, each given exactly what it uses: ``meta`` (counters), ``folders`` (library folders,
exclusions, the removal intent: store/folders.py, the same rules on both), ``writes`` (documents and chunks),
``vectors`` (the model, the queue, vector rows), ``reads`` (what retrieve/ asks), ``models``, ``export``. Each store
supplies its parts, its connection's life (open, close, snapshots, cancelling) and the few answers that are SQL of
its own (documents by path, counts, compaction, checks); everything here only forwards or applies the shared rules,
inside the one transaction hook each store defines (``_change``, ``_part_change``).

Outside store/ nobody sees this class or the parts: callers hold a ``LibraryStore`` (docs/ARCHITECTURE.md, "One
way into the store").
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Protocol

import numpy as np

from ..errors import StoreError
from ..library_listing import listing_from_documents
from ..models import ChunkDraft, DocumentInfo, LibraryListing, LibraryQuery, PassageWithNeighbours
from .doc_writes import DocumentWrite
from .folders import Folders, MetaRows
from .passages import read_passage
from .protocol import LibraryReads, VectorReads
from .row_types import WriteResult


@contextmanager
def closed_on_failure(close: Callable[[], None], driver_error: type[BaseException],
                      translate: Callable[[BaseException], StoreError | None]) -> Iterator[None]:
    """While a store opens (checks, migrations): any failure closes its connection, and the driver's own error
    (``driver_error``) becomes the one-sentence StoreError ``translate`` makes of it, where it makes one."""
    try:
        yield
    except BaseException as exc:
        close()
        error = translate(exc) if isinstance(exc, driver_error) else None
        if error is None:
            raise
        raise error from exc


class MetaPart(MetaRows, Protocol):
    def content_version(self) -> int: ...
    def change_stamp(self) -> tuple[int, ...]: ...


class VectorPart(VectorReads, Protocol):
    """The active model's vectors (store/vector_rows.py, store/postgres/vectors.py)."""

    def ensure_model(self, model_id: str, dim: int) -> None: ...
    def reset_vectors(self, model_id: str | None, dim: int | None) -> None: ...
    def store_vectors(self, ids: Sequence[int], vectors: np.ndarray, texts: Sequence[str] | None) -> int: ...


class WritesPart(Protocol):
    """Documents and their chunks (store/doc_writes.py, store/postgres/writes.py)."""

    def write_documents(self, docs: Sequence[DocumentWrite]) -> list[WriteResult]: ...
    def record_outcome(self, *, path: str, status: str, error: str, kind: str, size: int, mtime: float) -> None: ...
    def touch_document(self, doc_id: int, size: int, mtime: float) -> None: ...
    def remove_documents(self, doc_ids: Iterable[int]) -> int: ...


class LibraryFacade(ABC):
    """The forwarding and the shared rules of both stores (see the module doc)."""

    path: Path
    mode: str | None
    mode_note: str
    notices: list[str]
    machine: tuple[str, str]  # (id, readable name) of the machine the library folders it adds belong to
    meta: MetaPart
    folders: Folders
    writes: WritesPart
    vectors: VectorPart
    reads: LibraryReads

    @abstractmethod
    def _change(self) -> AbstractContextManager[object]:
        """One transaction around a change made here (meta, folders): SQLite's connection (a savepoint inside an
        open transaction), PostgreSQL's writer lock and transaction (which refuses a read-only library at once)."""

    @abstractmethod
    def _part_change(self) -> AbstractContextManager[object]:
        """What wraps a write of ``writes`` or ``vectors``: nothing on SQLite (those parts open their own
        transactions; a document's vectors follow in their own), the writer lock and one transaction on
        PostgreSQL."""

    @abstractmethod
    def list_documents(self) -> list[DocumentInfo]: ...

    # ---------- meta ----------
    def get_meta(self, key: str) -> str | None:
        return self.meta.get(key)

    def set_meta(self, key: str, value: str) -> None:
        """One ``meta`` row, committed (a library's own state, e.g. that the person paused its embedding)."""
        with self._change():
            self.meta.set(key, value)

    def content_version(self) -> int:
        return self.meta.content_version()

    def change_stamp(self) -> tuple[int, ...]:
        """Every change counter in one read (``MetaTable.change_stamp``); the GUI's "library changed" signal."""
        return self.meta.change_stamp()

    # ---------- library folders, exclusions, removals (store/folders.py) ----------
    def add_root(self, path: str, machine: tuple[str, str] | None = None) -> None:
        """A folder (re)added (``Folders.add_root``). ``machine``: whose folder it is (``copy`` keeps the
        source's); default :attr:`machine`."""
        with self._change():
            self.folders.add_root(path, machine or self.machine)

    def roots(self) -> list[str]:
        return self.folders.rows.roots()

    def root_machines(self) -> list[tuple[str, str, str]]:
        """(library folder, machine id, machine name) of every library folder, by path ('' id: not recorded)."""
        return self.folders.rows.root_machines()

    def remove_root(self, path: str) -> None:
        """Forget an indexed folder (its own transaction)."""
        with self._change():
            self.folders.rows.delete_roots([path])

    def begin_removal(self, paths: Sequence[str], exclude: Collection[str] = ()) -> list[str]:
        """One short transaction, the removal's recorded intent (``Folders.begin_removal``)."""
        with self._change():
            return self.folders.begin_removal(paths, exclude)

    def excluded(self) -> list[str]:
        """Paths removed from inside a library folder (store/folders.py): every walk leaves them out."""
        return self.folders.rows.excluded()

    def exclusion_rows(self) -> list[tuple[str, str]]:
        """(excluded path, the library folder it was removed from), by path (what `copy` carries over)."""
        return self.folders.rows.exclusion_rows()

    def add_exclusions(self, rows: Sequence[tuple[str, str]]) -> None:
        """Record exclusions as another library has them (`copy`), in one transaction."""
        with self._change():
            self.folders.add_exclusions(rows)

    def lift_exclusions(self, paths: Sequence[str], under: bool = False) -> list[str]:
        """Include again (committed): the exclusions of exactly ``paths``, or (``under``) every one at or below
        them. Returns what was lifted."""
        with self._change():
            return self.folders.lift_exclusions(paths, under)

    def pending_removals(self) -> list[str]:
        return self.folders.pending_removals()

    def removal_slice(self, paths: Sequence[str], limit: int) -> list[int]:
        return self.folders.removal_slice(paths, limit)

    def count_under(self, paths: Sequence[str]) -> int:
        return self.folders.count_under(paths)

    def end_removal(self, paths: Sequence[str]) -> None:
        with self._change():
            self.folders.end_removal(paths)

    # ---------- documents ----------
    def write_document(self, *, path: str, kind: str, language: str | None, title: str | None, size: int,
                       mtime: float, content_hash: str, chunks: Sequence[ChunkDraft], dedupe_keys: Sequence[str],
                       warning: str = "") -> WriteResult:
        """Replace one document and its chunks atomically (``write_documents`` with one document)."""
        return self.write_documents([DocumentWrite(path=path, kind=kind, language=language, title=title, size=size,
                                                   mtime=mtime, content_hash=content_hash, chunks=chunks,
                                                   dedupe_keys=dedupe_keys, warning=warning)])[0]

    def write_documents(self, docs: Sequence[DocumentWrite]) -> list[WriteResult]:
        """Replace several documents in ONE transaction: all of them commit, or none does."""
        with self._part_change():
            return self.writes.write_documents(docs)

    def record_outcome(self, *, path: str, status: str, error: str, kind: str = "", size: int = 0,
                       mtime: float = 0.0) -> None:
        """Record a skipped/failed file. A previously indexed version stays searchable (nothing is lost)."""
        with self._part_change():
            self.writes.record_outcome(path=path, status=status, error=error, kind=kind, size=size, mtime=mtime)

    def touch_document(self, doc_id: int, size: int, mtime: float) -> None:
        """Same content, new mtime: remember it so the next run takes the stat fast path."""
        with self._part_change():
            self.writes.touch_document(doc_id, size, mtime)

    def remove_documents(self, doc_ids: Iterable[int]) -> int:
        with self._part_change():
            return self.writes.remove_documents(doc_ids)

    def listing(self, query: LibraryQuery, pages: Mapping[str, int], eager_limit: int) -> LibraryListing:
        """Folder summaries and the first ``pages[key]`` files of the folders asked for (all files when at most
        ``eager_limit`` match). Here grouped in memory from ``list_documents()`` by the one listing module
        (desktop_memory/library_listing.py): a PostgreSQL library's Library lists what people browse (thousands of
        files); the SQLite store renders the same listing as indexed SQL (store/doc_listing.py)."""
        docs = self.list_documents()
        if len(docs) <= eager_limit:
            whole = listing_from_documents(docs, LibraryQuery(sort=query.sort, descending=query.descending))
            whole.query = query
            whole.complete = True
            return whole
        found = listing_from_documents(docs, query)
        found.files = {k: found.files[k][:n] for k, n in pages.items() if k in found.files and n > 0}
        return found

    def listing_page(self, query: LibraryQuery, key: str, offset: int, limit: int) -> list[DocumentInfo]:
        """Rows ``offset`` .. ``offset + limit`` of folder ``key``'s own files, in the query's order."""
        return listing_from_documents(self.list_documents(), query).files.get(key, [])[offset:offset + limit]

    def passage(self, chunk_id: int, neighbours: int = 1) -> PassageWithNeighbours | None:
        """The passage with id ``chunk_id`` and up to ``neighbours`` passages on each side (store/passages.py)."""
        return read_passage(self.reads, chunk_id, neighbours)

    # ---------- vectors ----------
    def model_info(self) -> tuple[str | None, int | None]:
        return self.vectors.model_info()

    def has_vector_table(self) -> bool:
        return self.vectors.has_vector_table()

    def ensure_model(self, model_id: str, dim: int) -> None:
        """Record the model on first use; refuse a different one (``VectorRows.ensure_model``). Already recorded:
        nothing to write (no writer lock taken)."""
        if self.vectors.model_info() == (model_id, dim):
            return
        with self._part_change():
            self.vectors.ensure_model(model_id, dim)

    def reset_vectors(self, model_id: str | None = None, dim: int | None = None) -> None:
        with self._part_change():
            self.vectors.reset_vectors(model_id, dim)

    def vector_state(self) -> tuple[int, int, int]:
        return self.vectors.vector_state()

    def load_bits(self, after_id: int = 0, limit: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        return self.vectors.load_bits(after_id, limit)

    def code_count(self, after_id: int = 0) -> int:
        return self.vectors.code_count(after_id)

    def iter_vectors(self, block: int = 4096, ids: Sequence[int] | None = None
                     ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        return self.vectors.iter_vectors(block, ids)

    def pending_count(self) -> int:
        return self.vectors.pending_count()

    def pending_chunks(self, limit: int, after_id: int = 0) -> list[tuple[int, str]]:
        return self.vectors.pending_chunks(limit, after_id)

    def store_vectors(self, ids: Sequence[int], vectors: np.ndarray, texts: Sequence[str] | None = None) -> int:
        with self._part_change():
            return self.vectors.store_vectors(ids, vectors, texts)


__all__ = ["LibraryFacade", "MetaPart", "VectorPart", "WritesPart", "closed_on_failure"]
