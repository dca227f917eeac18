"""The window's job queue: every queued folder is read before anything is embedded."""

from __future__ import annotations

from desktop_memory.gui.job_queue import Job, JobQueue, add_reads, merge_summaries
from desktop_memory.models import FileOutcome, IndexSummary


def test_reads_go_ahead_of_the_embedding_and_merge():
    q = JobQueue()
    q.add_index(["/a"])
    q.add_embed(auto=True)
    q.add_index(["/b"])  # dropped later: still read before the embedding
    q.add_index(["/c"], force=True)
    assert [(j.kind, j.paths, j.force) for j in q.pending] == [
        ("index", ["/a", "/b"], False), ("index", ["/c"], True), ("embed", [], False)]
    q.add_embed(auto=True)  # one embedding at most: it embeds everything pending
    assert sum(j.kind == "embed" for j in q.pending) == 1
    assert q.next().paths == ["/a", "/b"] and len(q) == 2


def test_a_new_read_preempts_only_an_automatic_embedding():
    q = JobQueue()
    running = Job("embed", auto=True)
    assert not q.should_preempt(running)
    q.add_index(["/new"])
    assert q.should_preempt(running)
    assert not q.should_preempt(Job("embed", auto=False))  # Library → Embed missing vectors: the person asked
    assert not q.should_preempt(Job("index", ["/x"]))
    q.add_embed(auto=False)
    q.add_embed(auto=True)
    assert q.pending[-1].auto is False  # an explicit request stays explicit


def test_summaries_of_a_burst_add_up():
    r1 = IndexSummary(indexed=2, failed=1, chunks_added=10, elapsed_s=1.0,
                      outcomes=[FileOutcome("/a/x.pdf", "failed", "corrupt")])
    r2 = IndexSummary(indexed=3, chunks_added=5, elapsed_s=0.5)
    reads = add_reads(r1, r2)
    assert (reads.indexed, reads.failed, reads.chunks_added, len(reads.outcomes)) == (5, 1, 15, 1)
    done = merge_summaries(reads, IndexSummary(chunks_embedded=15, elapsed_s=3.0, cancelled=True))
    assert done.indexed == 5 and done.chunks_embedded == 15 and done.cancelled and done.elapsed_s == 4.5
    assert done.problems()[0].path == "/a/x.pdf"
    assert merge_summaries(None, None) == IndexSummary()
