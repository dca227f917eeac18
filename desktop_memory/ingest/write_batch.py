"""The pipeline's write step: extracted documents are written several to a transaction.

Why: one commit per document made the text path slow down as a library grows (2,699 passages/s at 1M passages,
docs/BENCHMARKS.md): every commit writes each page it touched to the WAL (the FTS5 structure record and segment
pages, the ends of the chunk table and of its indexes, ~30 pages for a 10-chunk document) and FTS5 flushes one tiny
segment per commit, which its merges then rewrite again and again. A batch commits when it holds
``max_chunks`` chunks or when its oldest document has waited ``max_age_s`` — so a document is keyword-searchable
about a second after it was read, not at once — and always before the pipeline does anything else with the store
(removals, the embed step, the end of the run, Cancel).

Atomicity is per batch (``Store.write_documents``): a crash or a failed commit loses the whole batch and none of
what was committed before; the documents of a lost batch are not recorded, so the next run reads them again. The
transaction spans only the writes, never an extraction: the write lock is held for the SQL alone.
"""

from __future__ import annotations

import time

from ..models import STATUS_INDEXED, FileOutcome, IndexSummary
from ..store.protocol import DocumentWrite, LibraryStore


class WriteBatch:
    """Documents read and chunked but not yet written, each with the slot of its outcome in ``summary.outcomes``."""

    def __init__(self, store: LibraryStore, summary: IndexSummary, *, max_chunks: int, max_age_s: float) -> None:
        self.store = store
        self.summary = summary
        self.max_chunks = max_chunks
        self.max_age_s = max_age_s
        self.pending: list[tuple[int, DocumentWrite]] = []
        self.paths: set[str] = set()
        self.chunks = 0
        self.since = 0.0  # when the oldest pending document was added

    def add(self, doc: DocumentWrite) -> FileOutcome:
        """Queue ``doc``; its outcome (a placeholder until the batch is written) goes into the summary now, so the
        outcomes keep the walk's order. Writes the batch when it is full."""
        if not self.pending:
            self.since = time.perf_counter()
        outcome = FileOutcome(doc.path, STATUS_INDEXED, "", len(doc.chunks))
        self.pending.append((len(self.summary.outcomes), doc))
        self.summary.outcomes.append(outcome)
        self.paths.add(doc.path)
        self.chunks += len(doc.chunks)
        if self.chunks >= self.max_chunks:
            self.flush()
        return outcome

    def holds(self, path: str) -> bool:
        return path in self.paths

    def due(self) -> bool:
        """The oldest pending document has waited long enough: write before reading the next file."""
        return bool(self.pending) and time.perf_counter() - self.since >= self.max_age_s

    def flush(self) -> None:
        """Write every pending document in one transaction and fill in their outcomes and the summary's counts."""
        if not self.pending:
            return
        pending, self.pending = self.pending, []
        self.paths.clear()
        self.chunks = 0
        ts = time.perf_counter()
        results = self.store.write_documents([doc for _, doc in pending])
        summary = self.summary
        summary.store_s += time.perf_counter() - ts
        for (slot, doc), written in zip(pending, results):
            summary.indexed += 1
            summary.chunks_added += written.chunks - written.duplicates
            summary.duplicates_collapsed += written.duplicates
            summary.vectors_reused += written.vectors_reused
            reason = f"{written.duplicates} duplicate chunk(s) collapsed" if written.duplicates else ""
            summary.outcomes[slot] = FileOutcome(doc.path, STATUS_INDEXED, reason, written.chunks)
