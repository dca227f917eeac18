"""One scheduler for every write (desktop_memory/jobs): priorities, stepping aside, Cancel, final removal, bursts.
Real service, real SQLite, real files; the embedder takes real time per slice (conftest.py)."""

from __future__ import annotations

import time

from desktop_memory.jobs import EMBED, READ, REMOVE, WATCH, BurstEnded, Done, Job, JobQueue, add_reads, merge_summaries
from desktop_memory.models import FileOutcome, IndexSummary
from desktop_memory.service import MemoryService

from .conftest import SLICE_S, wait_for, write_folder


def test_queue_order_is_removal_watch_read_compact_embed():
    q = JobQueue()
    q.add(Job(EMBED, source="auto"))
    q.add(Job(READ, ["/a"]))
    q.add(Job(WATCH, source="watch"))
    q.add(Job("compact"))
    q.add(Job(REMOVE, ["/b"]))
    q.add(Job(READ, ["/c"]))  # merges into the queued read
    q.add(Job(EMBED))  # one embedding at most; the person's request makes it theirs
    assert [j.kind for j in q.jobs] == [REMOVE, WATCH, READ, "compact", EMBED]
    assert q.jobs[2].paths == ["/a", "/c"] and q.jobs[-1].source == "person"
    dropped = q.without_folders(["/a", "/c"])  # a removal empties the read: it is dropped, not run
    assert [j.kind for j in dropped] == [READ] and READ not in [j.kind for j in q.jobs]


def test_summaries_of_a_burst_count_each_file_once():
    r1 = IndexSummary(indexed=2, failed=1, chunks_added=10, elapsed_s=1.0,
                      outcomes=[FileOutcome("/a/x.pdf", "failed", "corrupt"), FileOutcome("/a/y.md", "indexed")])
    r2 = IndexSummary(indexed=3, unchanged=1, chunks_added=5, elapsed_s=0.5,
                      outcomes=[FileOutcome("/a/y.md", "unchanged")])  # a read resumed after stepping aside
    reads = add_reads(r1, r2)
    assert (reads.indexed, reads.unchanged, reads.failed, reads.chunks_added) == (5, 0, 1, 15)
    done = merge_summaries(reads, IndexSummary(chunks_embedded=15, elapsed_s=3.0, cancelled=True))
    assert done.indexed == 5 and done.chunks_embedded == 15 and done.cancelled
    assert merge_summaries(None, None) == IndexSummary()


def test_a_removal_runs_within_one_slice_of_a_long_embedding_which_then_resumes(svc, paced, tmp_path):
    keep = write_folder(tmp_path / "keep", files=60)
    gone = write_folder(tmp_path / "gone", files=20, word="zebra")
    sched = svc.scheduler
    done: list[str] = []  # the kinds of the jobs that ended
    sched.subscribe(lambda ev: done.append(ev.job.kind) if isinstance(ev, Done) else None)
    sched.read([str(keep), str(gone)])
    wait_for(lambda: paced.slices >= 3, what="embedding under way")
    t0 = time.monotonic()
    removal = sched.remove([str(gone)])
    removal.wait(30)
    took = time.monotonic() - t0
    assert removal.result == 20 and took < 2 * SLICE_S + 1.0, took  # one slice, plus the removal itself
    assert not [r for r in svc.search_outcome("zebra", backend="keyword").results]
    assert svc.stats().pending_vectors > 0, "the embedding was still running when the removal went through"
    assert EMBED not in done  # the embedding took turns with the removal, it did not end for it
    assert sched.wait_idle(120)  # ...and it resumed by itself and finished
    st = svc.stats()
    assert st.pending_vectors == 0 and st.vectors == st.chunks
    assert not any(d.path.startswith(str(gone)) for d in svc.documents()) and str(gone) not in svc.roots()


def test_cancel_stops_embedding_within_one_slice_and_nothing_restarts_it(svc, paced, tmp_path):
    folder = write_folder(tmp_path / "notes", files=60)
    sched = svc.scheduler
    bursts: list[IndexSummary] = []
    sched.subscribe(lambda ev: bursts.append(ev.summary) if isinstance(ev, BurstEnded) else None)
    t_start = time.monotonic()
    sched.read([str(folder)])
    wait_for(lambda: paced.slices >= 4, what="embedding under way")
    running = sched.cancel()
    assert running is not None and running.kind == EMBED
    wait_for(lambda: not sched.busy(), timeout=2 * SLICE_S + 1.0, what="the embedding to stop")
    slices = paced.slices
    vectors = svc.stats().vectors
    assert 0 < vectors < svc.stats().chunks
    # new work that is not the person's (a watch batch's read) does not restart it
    extra = write_folder(tmp_path / "more", files=2)
    sched.read([str(extra)], source="watch").wait(30)
    sched.embed(source="auto")
    time.sleep(1.0)
    assert paced.slices == slices and svc.stats().vectors == vectors and sched.paused
    # the burst's summary: cancelled, with the burst's real elapsed time
    assert bursts and bursts[0].cancelled and bursts[0].indexed == 60
    assert bursts[0].elapsed_s >= 4 * SLICE_S and bursts[0].elapsed_s <= time.monotonic() - t_start
    sched.embed()  # Resume: the person asks
    assert sched.wait_idle(120) and svc.stats().pending_vectors == 0 and not sched.paused


def test_a_queued_read_of_a_removed_folder_never_runs(svc, paced, tmp_path):
    first = write_folder(tmp_path / "first", files=30)
    later = write_folder(tmp_path / "later", files=5, word="quagga")
    sched = svc.scheduler
    sched.read([str(first)])
    queued = sched.read([str(later)], force=True)  # a separate read (other force flag), waiting
    sched.remove([str(later)])
    assert queued.finished and queued.dropped
    assert sched.wait_idle(120)
    assert not svc.search_outcome("quagga", backend="keyword").results and str(later) not in svc.roots()


def test_stop_says_what_it_stopped_and_refuses_new_work(svc, paced, tmp_path):
    folder = write_folder(tmp_path / "notes", files=40)
    sched = svc.scheduler
    sched.read([str(folder)])
    wait_for(lambda: paced.slices >= 2, what="embedding under way")
    t0 = time.monotonic()
    said = sched.stop()
    assert "embedding" in said and time.monotonic() - t0 < 2 * SLICE_S + 1.0
    late = sched.read([str(folder)])
    assert late.finished and late.dropped


def test_a_cancelled_embedding_stays_paused_after_a_restart_until_the_person_resumes(tmp_path, paced):
    """Cancel is remembered by the library itself: a restarted app (a new service and scheduler on the same file)
    does not start the embedding behind the person's back; their Resume ends the pause for good."""
    from desktop_memory.config import Settings

    db = tmp_path / "db" / "memory.db"
    folder = write_folder(tmp_path / "notes", files=30)
    first = MemoryService(Settings(), db_path=db, embedder=paced)
    try:
        first.scheduler.read([str(folder)])
        wait_for(lambda: paced.slices >= 2, what="embedding under way")
        first.scheduler.cancel()
        wait_for(lambda: not first.scheduler.busy(), timeout=2 * SLICE_S + 1.0, what="the embedding to stop")
        wait_for(first.embedding_paused, what="the pause to be written to the library")
    finally:
        first.close()
    again = MemoryService(Settings(), db_path=db, embedder=paced)
    try:
        sched = again.scheduler
        assert sched.paused and again.stats().pending_vectors > 0
        slices = paced.slices
        assert sched.embed(source="auto") is None  # a start-up resume is not the person's
        time.sleep(1.0)
        assert paced.slices == slices
        sched.embed()  # the person's Resume
        assert sched.wait_idle(120) and again.stats().pending_vectors == 0
        wait_for(lambda: not again.embedding_paused(), what="the resume to be written")
    finally:
        again.close()


def test_a_re_read_keeps_the_pause_and_a_drop_ends_it(svc, paced, tmp_path):
    """Issue 30 item 5: F5 (a re-read of the library) reads what changed and embeds nothing while embedding is
    paused; a drop (new work) ends the pause."""
    notes = write_folder(tmp_path / "notes", files=3)
    sched = svc.scheduler
    sched.cancel()  # the person's Cancel: paused (kept in the library)
    wait_for(svc.embedding_paused, what="the pause stored")
    sched.read([str(notes)], resume=False).wait(30)
    assert sched.wait_idle(30)
    assert sched.paused and svc.embedding_paused() and svc.stats().vectors == 0
    assert svc.stats().pending_vectors > 0 and svc.search_outcome("lorem", backend="keyword").results
    sched.read([str(write_folder(tmp_path / "more", files=1))]).wait(30)  # a drop
    assert sched.wait_idle(60)
    assert not sched.paused and svc.stats().pending_vectors == 0
