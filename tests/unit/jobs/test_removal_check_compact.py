"""Issue 26 item 2: removal, check and compact stay out of the way at any size. A big removal goes in slices (an
edit commits between them, a search answers meanwhile), is recorded first and finished after a restart; check
and compact report progress and can be cancelled with the library intact; compact never blocks search.
Real service, real SQLite, real files; the embedder takes real time per slice (conftest.py)."""

from __future__ import annotations

import threading
from pathlib import Path

import apsw
import pytest

from desktop_memory import library_writes as service_mod
from desktop_memory.config import EmbedderSettings, Settings, WatchSettings
from desktop_memory.errors import Cancelled
from desktop_memory.jobs import EMBED, REMOVE, WATCH, Done, Progress
from desktop_memory.models import IndexSummary
from desktop_memory.service import MemoryService
from desktop_memory.store import erase
from tests.support.secret_word import TAIL, WORD, occurrences

from .conftest import wait_for, write_folder

SECRET = WORD  # its tail is looked for in the database files


def _library(tmp_path: Path, files: int = 60) -> tuple[Path, Path]:
    keep = write_folder(tmp_path / "keep", files=10)
    gone = write_folder(tmp_path / "gone", files=files, word=SECRET)
    return keep, gone


def _under(svc: MemoryService, folder: Path) -> int:
    return len(svc.indexed_under(str(folder)))


def test_an_edit_commits_between_the_slices_of_a_big_removal_while_embedding_runs(svc, paced, tmp_path,
                                                                                  monkeypatch):
    monkeypatch.setattr(service_mod, "REMOVE_SLICE", 2)  # 60 documents: 30 slices
    keep, gone = _library(tmp_path)
    sched = svc.scheduler
    sched.read([str(keep), str(gone)]).wait(60)
    wait_for(lambda: sched.embedding is not None, what="embedding under way")
    order: list[str] = []
    edit_done = threading.Event()
    searched: list[int] = []

    def edit(_cancel: threading.Event) -> IndexSummary:
        note = keep / "note000.md"
        note.write_text(note.read_text(encoding="utf-8") + "\n\nplatypus edit\n", encoding="utf-8")
        return svc.index_paths([note], embed=False)

    def listen(ev) -> None:
        if isinstance(ev, Progress) and ev.job.kind == REMOVE:
            if ev.progress.files_done == 2 and not searched:  # the first slice is committed: an edit arrives now
                sched.watch_batch(edit, label="edit")
                # a search answers while the removal runs (readers never wait for the writer)
                searched.append(len(svc.search_outcome("lorem", backend="keyword").results))
            threading.Event().wait(0.02)  # each slice takes a while, as on a big library
        if isinstance(ev, Done) and ev.job.kind in (REMOVE, WATCH):
            order.append(ev.job.kind)
            if ev.job.kind == WATCH:
                edit_done.set()

    sched.subscribe(listen)
    removal = sched.remove([str(gone)])
    assert removal.wait(60) == 60
    assert edit_done.is_set() and order == [WATCH, REMOVE], order  # the edit did not wait for the whole removal
    assert searched and searched[0] > 0
    assert svc.search_outcome("platypus", backend="keyword").results, "the edit is searchable"
    assert _under(svc, gone) == 0 and svc.pending_removals() == []
    assert not svc.search_outcome(SECRET, backend="keyword").results
    assert sched.wait_idle(120)
    assert svc.check() == []


def test_a_removal_interrupted_by_quitting_is_finished_at_the_next_start(tmp_path, paced, monkeypatch):
    monkeypatch.setattr(service_mod, "REMOVE_SLICE", 5)
    db = tmp_path / "db" / "memory.db"
    settings = Settings(watch=WatchSettings(quiet_ms=100, max_wait_ms=1000))
    keep, gone = _library(tmp_path, files=40)
    svc = MemoryService(settings, db_path=db, embedder=paced)
    try:
        svc.index_paths([keep, gone], embed=False)
        quit_now = threading.Event()

        def progress(p) -> None:
            if p.phase == "remove" and p.files_done >= 10:
                quit_now.set()  # the app quits in the middle of the removal

        removed = svc.remove_paths([gone], progress=progress, cancel=quit_now)
        assert 10 <= removed < 40
        assert svc.pending_removals() == [str(gone)]
        assert str(gone) not in svc.roots(), "the folder left the library at once"
        assert _under(svc, gone) == 40 - removed
    finally:
        svc.close()
    again = MemoryService(settings, db_path=db, embedder=paced)
    try:
        assert again.pending_removals() == [str(gone)]
        sched = again.scheduler  # the window and `watch` create it at start: it finishes the removal first
        wait_for(lambda: not again.pending_removals(), what="the removal to finish")
        assert sched.wait_idle(60)
        assert _under(again, gone) == 0 and _under(again, keep) == 10
        assert not again.search_outcome(SECRET, backend="keyword").results
        assert again.check() == []
        assert occurrences(db) == {"db": 0, "-wal": 0}, "removed means gone from the file"
    finally:
        again.close()


def test_a_big_removal_erases_the_text_from_the_file(svc, tmp_path, monkeypatch):
    """More than BULK_ERASE documents: tombstones, then the FTS index merged in slices (not one 'optimize')."""
    monkeypatch.setattr(erase, "MERGE_PAGES", 1)
    keep, gone = _library(tmp_path)
    svc.index_paths([keep, gone], embed=False)
    with svc.writing() as store:
        store.checkpoint()
    assert svc.db_path.read_bytes().count(TAIL) > 0
    steps: list[str] = []
    assert svc.remove_paths([gone], progress=lambda p: steps.append(p.phase)) == 60
    assert "remove" in steps and steps[-1] == "done"
    assert occurrences(svc.db_path) == {"db": 0, "-wal": 0}
    assert svc.search_outcome("lorem", backend="keyword").results and svc.check() == []


def test_check_reports_each_step_and_a_cancel_stops_it_with_the_library_intact(svc, paced, tmp_path):
    keep, gone = _library(tmp_path, files=20)
    sched = svc.scheduler
    sched.read([str(keep), str(gone)]).wait(60)
    wait_for(lambda: sched.embedding is not None, what="embedding under way")
    steps: list[tuple[str, int, int]] = []
    assert svc.check(progress=lambda *s: steps.append(s)) == []
    assert [s[1] for s in steps] == list(range(len(steps))) and len(steps) >= 5 and steps[0][2] == len(steps)
    stop = threading.Event()

    def cancel_at_third(name: str, done: int, total: int) -> None:
        if done == 2:
            stop.set()

    with pytest.raises(Cancelled):
        svc.check(progress=cancel_at_third, cancel=stop)
    assert svc.check() == [] and svc.search_outcome("lorem", backend="keyword").results


class _LateCancel(threading.Event):
    """Answers "cancelled" from the ``after``-th look on: the person presses Cancel while the VACUUM runs."""

    def __init__(self, after: int) -> None:
        super().__init__()
        self.after, self.looks = after, 0

    def is_set(self) -> bool:
        self.looks += 1
        return self.looks >= self.after


def test_compact_reports_progress_never_blocks_search_and_a_cancel_leaves_the_library_as_it_was(
        svc, paced, tmp_path, monkeypatch):
    monkeypatch.setattr(erase, "COMPACT_HANDLER_STEPS", 10)
    monkeypatch.setattr(erase, "PROGRESS_EVERY_S", 0.0)
    keep, gone = _library(tmp_path, files=30)
    svc.index_paths([keep, gone], embed=False)
    svc.remove_paths([gone])
    before = svc.stats()
    with pytest.raises(Cancelled) as stopped:
        svc.compact(cancel=_LateCancel(after=50))
    assert isinstance(stopped.value.__cause__, apsw.InterruptError), "cancelled inside the VACUUM"
    after = svc.stats()
    assert (after.chunks, after.documents) == (before.chunks, before.documents)
    assert svc.check() == [] and svc.search_outcome("lorem", backend="keyword").results

    sched = svc.scheduler
    sched.embed()
    wait_for(lambda: sched.embedding is not None, what="embedding under way")
    answers: list[int] = []
    fractions: list[int] = []

    def progress(p) -> None:
        if p.phase == "compact" and not answers and 0 < p.files_done < 1000:  # the VACUUM holds the writer now
            found: list[int] = []
            t = threading.Thread(
                target=lambda: found.append(len(svc.search_outcome("lorem", backend="keyword").results)))
            t.start()
            t.join(10)
            answers.append(found[0] if found else -1)
        fractions.append(p.files_done)

    size_before, size_after = svc.compact(progress=progress)  # a job of the running scheduler
    assert answers and answers[0] > 0, "a search answered while the VACUUM ran"
    assert fractions[-1] == 1000 and fractions == sorted(fractions)
    assert size_after <= size_before
    assert sched.wait_idle(120)
    st = svc.stats()
    assert st.vectors == st.chunks and svc.check() == []
    assert EMBED not in [j.kind for j in sched.queued()]


def test_adding_a_folder_again_calls_off_its_interrupted_removal(svc, tmp_path):
    keep, gone = _library(tmp_path, files=30)
    svc.index_paths([keep, gone], embed=False)
    stop = threading.Event()
    stop.set()  # quit before the first slice: only the short transaction ran
    assert svc.remove_paths([gone], cancel=stop) == 0
    assert svc.pending_removals() == [str(gone)] and str(gone) not in svc.roots()
    svc.index_paths([gone], embed=False)  # the person adds it again before the removal was finished
    assert svc.pending_removals() == [] and str(gone) in svc.roots()
    svc.remove_paths([])  # what a start (the scheduler) would do: nothing left to remove
    assert _under(svc, gone) == 30


CHILD = """
import sys, time
from pathlib import Path
from desktop_memory.config import EmbedderSettings, Settings
from desktop_memory.service import MemoryService
from desktop_memory.store import erase
erase.COMPACT_HANDLER_STEPS, erase.PROGRESS_EVERY_S = 50, 0.0
real = erase.Eraser.compact

def compact(self, progress=None, cancel=None):
    def inside(fraction):  # SQLite's progress handler, on the writer thread, in the middle of the VACUUM
        if 0 < fraction < 1:
            Path(sys.argv[2]).write_text("vacuuming")
            time.sleep(60)  # killed here (the job's progress events reach the caller later, or coalesced)
    return real(self, inside, cancel)

erase.Eraser.compact = compact
svc = MemoryService(Settings(embedder=EmbedderSettings(kind="hash")), db_path=sys.argv[1])
svc.compact()
"""


def test_a_compaction_killed_in_the_middle_leaves_a_good_library(tmp_path):
    import os
    import signal
    import subprocess
    import sys

    db = tmp_path / "db" / "memory.db"
    svc = MemoryService(Settings(embedder=EmbedderSettings(kind="hash")), db_path=db)
    keep, gone = _library(tmp_path, files=30)
    try:
        svc.index_paths([keep, gone])
        svc.remove_paths([gone])
        before = svc.stats()
    finally:
        svc.close()
    marker = tmp_path / "vacuuming"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(db), str(marker)],
                             env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])})
    try:
        wait_for(marker.exists, timeout=60, what="the VACUUM under way")
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    again = MemoryService(Settings(embedder=EmbedderSettings(kind="hash")), db_path=db)
    try:
        after = again.stats()
        assert (after.chunks, after.vectors, after.documents) == (before.chunks, before.vectors, before.documents)
        assert again.check(full=True) == [] and again.search_outcome("lorem", backend="keyword").results
    finally:
        again.close()


def test_a_quit_while_erasing_is_finished_at_the_next_start(tmp_path, paced, monkeypatch):
    monkeypatch.setattr(erase, "MERGE_PAGES", 1)
    db = tmp_path / "db" / "memory.db"
    keep, gone = _library(tmp_path, files=40)
    svc = MemoryService(Settings(), db_path=db, embedder=paced)
    try:
        svc.index_paths([keep, gone], embed=False)
        quit_now = threading.Event()
        svc.remove_paths([gone], progress=lambda p: quit_now.set() if p.phase == "erase" else None, cancel=quit_now)
        assert svc.pending_removals() == [] and _under(svc, gone) == 0  # the documents are gone...
        assert svc.erasing_unfinished()  # ...their terms not yet out of the full-text index's pages
    finally:
        svc.close()
    again = MemoryService(Settings(), db_path=db, embedder=paced)
    try:
        sched = again.scheduler
        wait_for(lambda: not again.erasing_unfinished(), what="the erasing to finish")
        assert sched.wait_idle(60)
        assert occurrences(db) == {"db": 0, "-wal": 0} and again.check() == []
    finally:
        again.close()
