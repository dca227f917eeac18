"""One summary per burst of work: the reads' counts and problems merged with the embedding's vectors.

Why here (Qt-free): the scheduler (scheduler.py) ends a burst and says what it did; the window, the CLI and the
benchmarks all show the same merged summary with the burst's real elapsed time.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

from ..models import IndexSummary


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
    """Two reads of one burst as one summary. A read that stepped aside and resumed sees the files it had already
    read as "unchanged": those keep their first outcome, so a file is counted once."""
    if a is None:
        return b
    seen = {o.path for o in a.outcomes}
    again = [o for o in b.outcomes if o.status == "unchanged" and o.path in seen]
    outcomes = [*a.outcomes, *(o for o in b.outcomes if not (o.status == "unchanged" and o.path in seen))]
    return dataclasses.replace(
        a,
        indexed=a.indexed + b.indexed, unchanged=a.unchanged + b.unchanged - len(again),
        skipped=a.skipped + b.skipped, failed=a.failed + b.failed, removed=a.removed + b.removed,
        chunks_added=a.chunks_added + b.chunks_added, chunks_embedded=a.chunks_embedded + b.chunks_embedded,
        vectors_reused=a.vectors_reused + b.vectors_reused, cancelled=a.cancelled or b.cancelled,
        elapsed_s=a.elapsed_s + b.elapsed_s, extract_s=a.extract_s + b.extract_s, store_s=a.store_s + b.store_s,
        embed_s=a.embed_s + b.embed_s, embed_error=b.embed_error or a.embed_error,
        duplicates_collapsed=a.duplicates_collapsed + b.duplicates_collapsed,
        outcomes=outcomes,
        excluded=[*a.excluded, *(p for p in b.excluded if p not in a.excluded)],
        included_again=[*a.included_again, *b.included_again],
    )


@dataclass
class Burst:
    """The work from the first job after idle to the next idle (or a Cancel): one summary, real elapsed time."""

    started: float = field(default_factory=time.monotonic)
    read: IndexSummary | None = None
    embedded: IndexSummary = field(default_factory=IndexSummary)
    visible: bool = False  # the person's work (or a resume) is part of it: the window shows it

    def summary(self, cancelled: bool) -> IndexSummary:
        s = add_reads(self.read, self.embedded) if self.read is not None else self.embedded
        s.cancelled = s.cancelled or cancelled
        s.elapsed_s = time.monotonic() - self.started
        return s


__all__ = ["Burst", "add_reads", "merge_summaries"]
