"""The pieces on their own: the walk's skip decision for one changed path, the debouncer, the plan."""

from __future__ import annotations

import os
import threading

from desktop_memory.config import IngestSettings
from desktop_memory.ingest.walk import name_skip_reason, walk_paths
from desktop_memory.watch.debounce import Batch, Debouncer
from desktop_memory.watch.observer import FolderObserver
from desktop_memory.watch.plan import catch_up_plan, plan_changes
from desktop_memory.watch.watcher import outermost

from .conftest import make_tree, wait_for


def test_name_skip_reason_agrees_with_the_walk(tmp_path):
    root = make_tree(tmp_path / "r", {
        "a.md": "a", "sub/b.md": "b", ".git/HEAD": "ref", "node_modules/x/y.js": "y", ".hidden.md": "h",
        "sub/.cache/c.txt": "c", "venv/pyvenv.cfg": "home", "venv/lib/d.py": "d", "build.log": "l",
    })
    settings = IngestSettings(extra_ignore=["*.log"])
    walked = {e.path: e.skip_reason for e in walk_paths([root], settings)}
    for rel in ["a.md", "sub/b.md", ".git/HEAD", "node_modules/x/y.js", ".hidden.md", "sub/.cache/c.txt",
                "venv/lib/d.py", "build.log"]:
        path = str(root / rel)
        reason = name_skip_reason(path, str(root), settings)
        if path in walked and walked[path] is None:
            assert reason is None, rel
        else:
            assert reason is not None, rel  # the walk left it out (itself or a folder above it)
    assert name_skip_reason(str(root / ".git" / "index.lock"), str(root), settings) == "ignored folder (.git)"
    # a path that is gone is judged by its name (the old side of a rename, a deletion)
    assert name_skip_reason(str(root / "gone" / ".swp"), str(root), settings) == "hidden file"
    assert name_skip_reason(str(root / "gone.md"), str(root), settings) is None
    assert name_skip_reason(str(tmp_path / "elsewhere.md"), str(root), settings) == "outside the folder"


def test_a_storm_of_events_is_one_batch_and_a_steady_drip_still_flushes():
    deb = Debouncer(quiet_s=0.2, max_wait_s=0.6)
    for i in range(5000):
        deb.add(f"/r/f{i}.md")
        deb.add(f"/r/f{i}.md")  # written twice: indexed once
    batch = deb.next_batch()
    assert batch is not None and len(batch.changes) == 5000 and batch.events == 10000
    assert not deb.pending()

    stop = threading.Event()

    def drip() -> None:  # an event every 50 ms, never quiet for 0.2 s
        i = 0
        while not stop.wait(0.05):
            deb.add(f"/r/log{i % 3}.txt")
            i += 1

    t = threading.Thread(target=drip)
    t.start()
    try:
        first = deb.next_batch()  # released by max_wait although events keep coming
        assert first is not None and first.changes
    finally:
        stop.set()
        t.join()
    deb.close()
    assert deb.next_batch() is None


def test_5000_real_files_written_at_once_reach_the_sink_as_few_batches(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    deb = Debouncer(quiet_s=1.0, max_wait_s=30)  # generous: 8 helpers share 2 cores, writes get spaced out
    obs = FolderObserver(deb.add)
    obs.start()
    try:
        assert obs.watch(str(root)) is None
        for d in range(50):  # a checkout: 50 new folders of 100 files
            sub = root / f"pkg{d}"
            sub.mkdir()
            for i in range(100):
                (sub / f"m{i}.py").write_text(f"x = {i}\n")
        batches = []
        seen: set[str] = set()
        expected = {str(root / f"pkg{d}" / f"m{i}.py") for d in range(50) for i in range(100)}

        def all_seen() -> bool:
            b = deb.next_batch()
            assert b is not None
            batches.append(b)
            seen.update(b.changes)
            return expected <= seen

        wait_for(all_seen, timeout=60, what="5,000 files' events")
        assert len(batches) <= 3, f"{len(batches)} batches for one checkout"
    finally:
        obs.stop()


def test_plan_indexes_existing_removes_gone_and_ignores_tool_folders(tmp_path):
    root = make_tree(tmp_path / "r", {"a.md": "a", "new/b.md": "b", "new/.c.md": "c", "new/img.png": "p",
                                      ".git/objects/ab": "z"})
    settings = IngestSettings()
    r = str(root)
    plan = plan_changes({f"{r}/a.md": False, f"{r}/new": True, f"{r}/gone.md": False, f"{r}/.git/objects/ab": False,
                         r: True, str(tmp_path / "outside.md"): False}, [r], settings)
    assert plan.index == [f"{r}/a.md", f"{r}/new/b.md", f"{r}/new/img.png"]  # png: indexing records "binary"
    assert plan.remove == [f"{r}/gone.md"]
    assert plan.ignored == 2  # .git and outside; the root's own event is neither
    known = {f"{r}/a.md": (1, 0.0), f"{r}/old.md": (3, 1.0)}
    st = os.stat(root / "new" / "b.md")
    known[f"{r}/new/b.md"] = (st.st_size, st.st_mtime)
    cu = catch_up_plan(r, known, settings)
    assert cu.index == [f"{r}/a.md", f"{r}/new/img.png"]  # a.md differs, b.md unchanged, .c.md hidden
    assert cu.remove == [f"{r}/old.md"]


def test_nested_folders_share_one_watch():
    assert outermost(["/a/b", "/a", "/c", "/a/bc", "/ab"]) == ["/a", "/ab", "/c"]


def test_documents_under_is_an_exact_prefix_range_on_the_path_index(tmp_path):
    """The watcher removes deleted files one path at a time: the folder lookup must not scan every document."""
    from desktop_memory.store import Store

    store = Store(tmp_path / "s.db")
    try:
        for path in ["/a/b", "/a/b/x.md", "/a/b/sub/y.md", "/a/bc/z.md", "/a/b0.md", "/a/b.md", "/a/b/ü.md"]:
            store.record_outcome(path=path, status="skipped", error="test")
        assert [d.path for d in store.documents_under("/a/b")] == ["/a/b/sub/y.md", "/a/b/x.md", "/a/b/ü.md"]
        assert [d.path for d in store.documents_under("/a/b/")] == ["/a/b/sub/y.md", "/a/b/x.md", "/a/b/ü.md"]
        plan = " ".join(str(r) for r in store.conn.execute(
            "explain query plan select id from documents where path >= ? and path < ?", ("/a/", "/a0")))
        assert "USING INDEX" in plan or "USING COVERING INDEX" in plan, plan
    finally:
        store.close()


def test_a_long_bulk_operation_waits_for_quiet_but_a_lone_busy_file_does_not():
    now = [0.0]
    deb = Debouncer(quiet_s=0.3, max_wait_s=1.5, storm_paths=200, storm_wait_s=20, clock=lambda: now[0])
    ready: list[object] = []

    def consume() -> None:
        ready.append(deb.next_batch())

    for i in range(1000):  # a checkout writing 1,000 files over 8 s (fake clock: no waiting in this test)
        now[0] = i * 0.008
        deb.add(f"/r/f{i}.md")
    now[0] = 8.0
    t = threading.Thread(target=consume)
    t.start()
    t.join(0.2)
    assert not ready, "a storm is not released while it goes on"
    now[0] = 8.4  # quiet for 0.4 s: the consumer's timed wait ends and it sees the storm is over
    t.join(5)
    batch = ready[0]
    assert isinstance(batch, Batch) and len(batch.changes) == 1000

    now[0] = 100.0
    for i in range(20):  # one log file written every 100 ms
        now[0] = 100.0 + i * 0.1
        deb.add("/r/app.log")
    assert deb.next_batch() is not None  # 1.9 s after its first event: released by max_wait


def test_an_idle_debouncer_asks_to_look_at_the_library_again_only_with_poll_s():
    polling = Debouncer(quiet_s=0.05, poll_s=0.2)
    batch = polling.next_batch()  # nothing happened: after poll_s, a ("roots", "") request
    assert batch is not None and batch.requests == [("roots", "")] and not batch.changes
    quiet = Debouncer(quiet_s=0.05)
    got: list[object] = []
    t = threading.Thread(target=lambda: got.append(quiet.next_batch()), daemon=True)
    t.start()
    t.join(0.5)
    assert not got  # without poll_s an idle watch never wakes
    quiet.close()
    t.join(5)
    assert got == [None]
