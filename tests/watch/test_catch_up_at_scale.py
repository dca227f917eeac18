"""Issue 26 item 2: the watch's start-up catch-up of a big folder walks on the watcher's own thread, reads only that
folder's rows of the index, and says how far it got; the writer stays free for reads and edits meanwhile."""

from __future__ import annotations

import threading

from desktop_memory.watch import CATCH_UP, CHECKING
from desktop_memory.watch import watcher as watcher_mod

from .conftest import keyword_hits, make_tree, wait_for


def test_a_slow_catch_up_walk_leaves_the_writer_free_and_reports_progress(tmp_path, svc, start_watcher,
                                                                          monkeypatch):
    big = make_tree(tmp_path / "big", {f"d{i // 100}/n{i}.md": f"note {i} about herons\n" for i in range(600)})
    other = make_tree(tmp_path / "other", {"a.md": "pelican notes\n"})
    svc.index_paths([big], embed=False)
    (big / "d0" / "n0.md").write_text("note 0 about kingfishers now\n", encoding="utf-8")  # changed while "closed"
    walking, release = threading.Event(), threading.Event()
    original = watcher_mod.catch_up_plan

    def slow_walk(root, known, settings, progress=None, cancel=None, every_s=1.0, excluded=()):
        walking.set()
        release.wait(30)  # a 50,000-file folder on a slow disk
        return original(root, known, settings, progress=progress, cancel=cancel, every_s=0.0, excluded=excluded)

    monkeypatch.setattr(watcher_mod, "catch_up_plan", slow_walk)
    listed = []
    monkeypatch.setattr(svc, "documents", lambda: listed.append(1) or [])  # the whole library is never listed
    result: dict[str, object] = {}
    starter = threading.Thread(target=lambda: result.update(started=start_watcher(folders=[str(big)], embed=False)))
    starter.start()
    assert walking.wait(30)
    # the walk is under way: a person's read goes through the writer now, it does not wait for the walk
    summary = svc.scheduler.read([str(other)]).wait(30)
    assert summary is not None and summary.indexed == 1 and keyword_hits(svc, "pelican")
    release.set()
    starter.join(60)
    _watcher, rec = result["started"]
    checking = rec.of(CHECKING)
    assert checking and "of about 600 files" in checking[0].message
    wait_for(lambda: rec.of(CATCH_UP), what="the catch-up's summary")
    assert keyword_hits(svc, "kingfishers"), "what changed while the app was closed was indexed"
    assert not listed
