"""The two one-row settings writes are jobs of the top priority (issue 31 item 1): the embedding pause and the
model target take the one write route, yet never wait behind a long job on the writer lane. A running read (here a
one-shot ``index`` that embeds as it goes, holding the writer throughout) steps aside for one at its next slice, the
setting is written, and the read resumes by itself. Before, both were direct writes that waited for the writer:
pausing embedding during a long ``index`` took effect only when the whole run was over."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from desktop_memory import library_writes
from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.jobs import SETTINGS, Job, Scheduler
from desktop_memory.jobs.operations import SetEmbeddingPaused
from desktop_memory.models import IndexProgress, IndexSummary
from desktop_memory.service import MemoryService
from tests.support.paced import SLICE_S, PacedEmbedder, wait_for, write_folder

FILES, SECTIONS = 100, 16  # ~600 passages: ~38 slices of ~0.15 s, ~5.5 s of embedding in one index run


def _long_index(tmp_path: Path) -> tuple[MemoryService, PacedEmbedder, threading.Thread, list[IndexSummary]]:
    folder = write_folder(tmp_path / "notes", files=FILES, paragraphs=SECTIONS)
    embedder = PacedEmbedder()
    svc = MemoryService(Settings(), db_path=tmp_path / "memory.db", embedder=embedder)
    out: list[IndexSummary] = []
    run = threading.Thread(target=lambda: out.append(svc.index_paths([folder])), daemon=True)
    run.start()
    wait_for(lambda: embedder.slices >= 2, what="the index run embedding")
    return svc, embedder, run, out


def _finishes_whole(svc: MemoryService, run: threading.Thread, out: list[IndexSummary]) -> None:
    """The read that stepped aside resumed by itself and finished everything, as if nothing had happened."""
    run.join(60)
    assert not run.is_alive() and out, "the index run did not finish"
    summary = out[0]
    assert not summary.cancelled and summary.failed == 0
    assert summary.indexed == FILES, summary
    stats = svc.stats()
    assert stats.documents == {"indexed": FILES} and stats.pending_vectors == 0, stats
    assert stats.vectors == stats.chunks == summary.chunks_added == summary.chunks_embedded, (stats, summary)


def test_pausing_embedding_during_a_long_index_is_written_within_a_slice(tmp_path: Path) -> None:
    svc, embedder, run, out = _long_index(tmp_path)
    try:
        before = embedder.slices
        t0 = time.monotonic()
        svc.set_embedding_paused(True)
        took = time.monotonic() - t0
        print(f"pause written in {took:.3f} s")
        # within a few slices (the read steps aside at its next slice boundary), not after the ~5.5 s run
        assert took < 8 * SLICE_S + 1.0, f"the pause waited {took:.2f} s"
        assert run.is_alive(), "the index run was over before the pause was written"
        assert embedder.slices - before <= 4
        assert svc.embedding_paused()  # in the library, for a window or `watch` to see now
        _finishes_whole(svc, run, out)
        assert svc.embedding_paused()
    finally:
        svc.close()


def test_switching_the_model_during_a_long_index_is_written_within_a_slice(tmp_path: Path) -> None:
    svc, _embedder, run, out = _long_index(tmp_path)
    # the person picks another model (a service given its embedder keeps it: the test swaps it as a new setting
    # would; the new model is never loaded here, only its name is written as the library's target)
    svc._embedders._configured = HashEmbedder(32)
    try:
        t0 = time.monotonic()
        build = svc.set_embedder_settings(svc.settings.embedder)
        took = time.monotonic() - t0
        print(f"model target written in {took:.3f} s")
        assert took < 8 * SLICE_S + 1.0, f"the model switch waited {took:.2f} s"
        assert run.is_alive(), "the index run was over before the model target was written"
        assert build  # another model than the library's: its set is to be built beside
        with svc.reading() as store:
            assert store.models.target() == "hash-test-32"
        _finishes_whole(svc, run, out)
    finally:
        svc.close()


def test_pausing_during_a_long_embedding_job_is_written_within_a_slice(tmp_path: Path) -> None:
    """The embedding lane holds the writer only to commit each slice: the settings job takes it in between."""
    folder = write_folder(tmp_path / "notes", files=FILES, paragraphs=SECTIONS)
    embedder = PacedEmbedder()
    svc = MemoryService(Settings(), db_path=tmp_path / "memory.db", embedder=embedder)
    try:
        svc.index_paths([folder], embed=False)
        out: list[IndexSummary] = []
        run = threading.Thread(target=lambda: out.append(svc.embed_pending()), daemon=True)
        run.start()
        wait_for(lambda: embedder.slices >= 2, what="the embedding job under way")
        t0 = time.monotonic()
        svc.set_embedding_paused(True)
        took = time.monotonic() - t0
        assert took < 8 * SLICE_S + 1.0, f"the pause waited {took:.2f} s"
        assert run.is_alive() and svc.embedding_paused()
        run.join(60)
        assert out and not out[0].cancelled and svc.stats().pending_vectors == 0
    finally:
        svc.close()


def test_a_long_removal_steps_aside_for_a_setting_and_goes_on(tmp_path: Path, monkeypatch) -> None:
    """A removal takes the writer per slice; as a job it would still hold the writer lane to its end, so it steps
    aside for a waiting setting, as it does for a saved edit."""
    monkeypatch.setattr(library_writes, "REMOVE_SLICE", 1)  # one document per slice: 200 slices
    folder = write_folder(tmp_path / "notes", files=200, paragraphs=1)
    svc = MemoryService(Settings(), db_path=tmp_path / "memory.db", embedder=HashEmbedder(64))
    slices: list[int] = []

    def slow(p: IndexProgress) -> None:  # ~20 ms a slice: a removal of ~4 s
        slices.append(p.files_done)
        time.sleep(0.02)

    try:
        svc.index_paths([folder], embed=False)
        removed: list[int] = []
        run = threading.Thread(target=lambda: removed.append(svc.remove_paths([folder], progress=slow)),
                               daemon=True)
        run.start()
        wait_for(lambda: len(slices) >= 3, what="the removal under way")
        t0 = time.monotonic()
        svc.set_embedding_paused(True)
        took = time.monotonic() - t0
        assert took < 1.5, f"the pause waited {took:.2f} s"
        assert run.is_alive(), "the removal was over before the pause was written"
        run.join(60)
        assert removed == [200] and svc.embedding_paused() and not svc.indexed_under(str(folder))
    finally:
        svc.close()


class _Writes:
    """Only what a settings job and the scheduler's start need; every write records the thread it ran on."""

    def __init__(self) -> None:
        self.paused: list[bool] = []
        self.threads: list[str] = []

    def set_embedding_paused(self, paused: bool) -> None:
        self.threads.append(threading.current_thread().name)
        self.paused.append(paused)

    def embedding_paused(self) -> bool:
        return bool(self.paused and self.paused[-1])

    def pending_removals(self) -> list[str]:
        return []

    def erasing_unfinished(self) -> bool:
        return False


def test_cancel_then_quit_still_remembers_the_pause_on_the_writer_route() -> None:
    writes = _Writes()
    sched = Scheduler(writes)  # type: ignore[arg-type]  (a partial fake: only what these jobs call)
    events: list[object] = []
    sched.subscribe(events.append)
    sched.cancel()  # the person's Cancel: the pause is a settings job, quiet (no burst, no job events)
    assert sched.wait_idle(5)
    assert writes.paused == [True] and writes.threads == ["desktop-memory-writer"]
    # queued when the library closes: written on the closing thread, once the lanes stopped (not dropped)
    with sched._cond:  # hold the lanes so the job is still queued at stop()
        job = sched._submit(Job(SETTINGS, operation=SetEmbeddingPaused(False)))
        sched.stopping = True
    sched.stop()
    assert job.finished and not job.dropped and writes.paused == [True, False]
    assert all(type(e).__name__ in ("Paused", "BurstEnded") for e in events), events
