"""Reading a copy's source ahead of its writes (library_copy.py): a thread of its own reads and plans the next
slices while the copy's thread writes the current one into the target.

Reading a slice (its documents, chunks and every model's vectors) and planning it (the documents to write, their
passages' dedupe keys) is the copy's own work; writing it is mostly waiting for the target (a server's statements,
SQLite's pages). Done one after the other they add up; on two threads the reading hides behind the writing
(docs/BENCHMARKS.md, "PostgreSQL: segments, tokenizing ahead").

The source store belongs to the reader thread from ``start`` until ``close`` returns; the target store never leaves
the copy's thread (whether a document is already in the target is its question to ask). At most ``AHEAD`` planned
slices wait: ~2,000 passages and their vectors each. An error in the reader reaches the copy's thread as raised
there; ``close`` stops the reader between two slices.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from .chunking.dedupe import chunk_key
from .machines_view import is_inside
from .models import STATUS_INDEXED, ChunkDraft
from .store.protocol import DocumentWrite, ExportChunk, ExportDocument, LibraryStore

AHEAD = 2  # planned slices waiting at most


@dataclass
class SourceSlice:
    """One slice of the source, read and planned."""

    read: int  # source documents in the slice (progress)
    indexed: list[ExportDocument]
    chunks: dict[int, list[ExportChunk]]
    outcomes: list[ExportDocument]  # skipped or failed files: recorded as they were (their reason kept)
    writes: list[DocumentWrite]  # every indexed document; the copy's thread drops those the target already has
    vectors: dict[str, dict[int, np.ndarray]] = field(default_factory=dict)  # model → source chunk id → vector
    # the source's copies whose text is exactly their holder's: only those may take the holder's vector (a copy
    # shares its holder's normalised body, not always its text, and a vector is the embedding of its own text)
    same_text: set[int] = field(default_factory=set)
    unchanged: int = 0  # set by the copy's thread


class SliceReader:
    """The source's slices in order, read by a thread of their own (``AHEAD`` ahead of the one consumed)."""

    def __init__(self, src: LibraryStore, models: Sequence[str], removing: Sequence[str], slice_size: int,
                 active: str | None = None) -> None:
        self._src, self._models, self._removing, self._size = src, list(models), list(removing), slice_size
        self._active = active  # the target's active model: its vectors travel with the writes
        self._queue: queue.Queue[SourceSlice | BaseException | None] = queue.Queue(maxsize=AHEAD)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dm-copy-reader", daemon=True)

    def start(self) -> SliceReader:
        self._thread.start()
        return self

    def __iter__(self) -> Iterator[SourceSlice]:
        while True:
            item = self._queue.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    def close(self) -> None:
        """Stop reading (between two slices) and wait for the thread: the source is the caller's again."""
        self._stop.set()
        while self._thread.is_alive():
            try:  # make room for a reader blocked on a full queue
                self._queue.get(timeout=0.05)
            except queue.Empty:
                pass
        self._thread.join()

    def _put(self, item: SourceSlice | BaseException | None) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        after = 0
        try:
            while not self._stop.is_set():
                docs = self._src.export.documents(after, self._size)
                if not docs:
                    break
                after = docs[-1].id
                wanted = [d for d in docs if not any(is_inside(d.path, p) for p in self._removing)]
                if not self._put(self._plan(wanted, len(docs))):
                    return
            self._put(None)
        except BaseException as exc:  # handed to the copy's thread, raised there
            self._put(exc)

    def _plan(self, docs: Sequence[ExportDocument], read: int) -> SourceSlice:
        indexed = [d for d in docs if d.status == STATUS_INDEXED]
        chunks = self._src.export.chunks([d.id for d in indexed])
        plan = SourceSlice(read, indexed, chunks, [d for d in docs if d.status != STATUS_INDEXED], [])
        holders = sorted({c.dup_of if c.dup_of is not None else c.id for own in chunks.values() for c in own})
        plan.vectors = {m: self._src.export.vectors(m, holders) for m in self._models}
        copies = [c for own in chunks.values() for c in own if c.dup_of is not None]
        if copies:
            held = self._src.reads.chunk_rows(sorted({c.dup_of for c in copies if c.dup_of is not None}))
            plan.same_text = {c.id for c in copies if c.dup_of in held and held[c.dup_of].text == c.text}
        own = plan.vectors.get(self._active, {}) if self._active is not None else {}
        for doc in indexed:
            own_chunks = chunks.get(doc.id, [])
            drafts = [ChunkDraft(c.text, c.location) for c in own_chunks]
            plan.writes.append(DocumentWrite(path=doc.path, kind=doc.kind, language=doc.language, title=doc.title,
                                             size=doc.size, mtime=doc.mtime, content_hash=doc.content_hash,
                                             chunks=drafts, dedupe_keys=[c.dedupe_key or chunk_key(d)
                                                                         for c, d in zip(own_chunks, drafts)],
                                             warning=doc.error,
                                             vectors=[None if (s := vector_source(c, plan.same_text)) is None
                                                      else own.get(s) for c in own_chunks]
                                             if own else None))
        return plan


def vector_source(chunk: ExportChunk, same_text: set[int]) -> int | None:
    """The source chunk whose vector is the embedding of ``chunk``'s text: its own, its holder's when their texts
    are the same, else none (the target embeds it from its own text)."""
    if chunk.dup_of is None:
        return chunk.id
    return chunk.dup_of if chunk.id in same_text else None
