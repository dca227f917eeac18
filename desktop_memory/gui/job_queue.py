"""The window's queue of index jobs: read every queued folder first, then embed (Qt-free).

Why: reading a folder makes it keyword-searchable in seconds; embedding it takes minutes. With one job doing
both, a folder dropped behind another waited for the first one's embedding before it was even read (36 PDFs
waited 3 minutes). So an index job only *reads* (``index_paths(..., embed=False)``) and queues one embedding job
behind every read; a folder dropped while that embedding runs preempts it (the embedding stops between
batches, keeping every vector made so far), is read, and the embedding resumes after it.

The summary the person sees is one per burst: the reads' counts and problems merged with the embedding's
vectors, errors and cancellation (``merge_summaries``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ..models import IndexSummary


@dataclass
class Job:
    kind: str  # "index" (read files, no vectors) | "embed" (vectors for everything still without)
    paths: list[str] = field(default_factory=list)
    force: bool = False
    auto: bool = False  # an embed the queue added after reading: a new drop may preempt it


class JobQueue:
    def __init__(self) -> None:
        self.pending: list[Job] = []

    def __len__(self) -> int:
        return len(self.pending)

    def __bool__(self) -> bool:
        return bool(self.pending)

    def clear(self) -> None:
        self.pending.clear()

    def add_index(self, paths: list[str], force: bool = False) -> None:
        """Queue a read, ahead of any queued embedding; merged into a queued read with the same ``force``."""
        for job in self.pending:
            if job.kind == "index" and job.force == force:
                job.paths += [p for p in paths if p not in job.paths]
                return
        at = next((i for i, j in enumerate(self.pending) if j.kind == "embed"), len(self.pending))
        self.pending.insert(at, Job("index", list(paths), force))

    def add_embed(self, auto: bool = False) -> None:
        """Queue one embedding at the end (there is never more than one: it embeds everything pending)."""
        for job in self.pending:
            if job.kind == "embed":
                job.auto = job.auto and auto  # an explicit request is never preempted
                return
        self.pending.append(Job("embed", auto=auto))

    def next(self) -> Job | None:
        return self.pending.pop(0) if self.pending else None

    def should_preempt(self, running: Job | None) -> bool:
        """A read is waiting behind an embedding the queue started itself: stop that embedding for now."""
        return (running is not None and running.kind == "embed" and running.auto
                and any(j.kind == "index" for j in self.pending))


def merge_summaries(read: IndexSummary | None, embed: IndexSummary | None) -> IndexSummary:
    """One summary for a read followed by its embedding (either may be missing)."""
    if read is None:
        return embed or IndexSummary()
    if embed is None:
        return read
    return dataclasses.replace(
        read,
        chunks_embedded=read.chunks_embedded + embed.chunks_embedded,
        cancelled=read.cancelled or embed.cancelled,
        elapsed_s=read.elapsed_s + embed.elapsed_s,
        embed_s=read.embed_s + embed.embed_s,
        embed_error=embed.embed_error or read.embed_error,
        outcomes=list(read.outcomes),
    )


def add_reads(a: IndexSummary | None, b: IndexSummary) -> IndexSummary:
    """Two reads of one burst (a drop that preempted the embedding) as one summary."""
    if a is None:
        return b
    return dataclasses.replace(
        a,
        indexed=a.indexed + b.indexed, unchanged=a.unchanged + b.unchanged, skipped=a.skipped + b.skipped,
        failed=a.failed + b.failed, removed=a.removed + b.removed, chunks_added=a.chunks_added + b.chunks_added,
        vectors_reused=a.vectors_reused + b.vectors_reused, cancelled=a.cancelled or b.cancelled,
        elapsed_s=a.elapsed_s + b.elapsed_s, extract_s=a.extract_s + b.extract_s, store_s=a.store_s + b.store_s,
        duplicates_collapsed=a.duplicates_collapsed + b.duplicates_collapsed,
        outcomes=[*a.outcomes, *b.outcomes],
    )
