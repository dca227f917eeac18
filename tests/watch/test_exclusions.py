"""Issue 30 item 4: what the person removes from inside a library folder stays removed. The removal records an
exclusion in the library; the watcher (events), the catch-up at start, a re-read (F5) and indexing a changed file
all leave it out; naming it again includes it again, and says so. Real folders, the real store and watcher; the
README's own example (`remove docs/PRIVACY.md`, then `watch`) with the real CLI in subprocesses."""

from __future__ import annotations

import signal

from desktop_memory.service import MemoryService
from desktop_memory.watch.plan import catch_up_plan
from tests.support.cli import finish, run_cli, spawn_cli, write_settings

from .conftest import keyword_hits, make_tree, wait_for

FILES = {"top.md": "# Top\n\nkiwi orchard\n", "PRIVACY.md": "# Privacy\n\nnarwhal secret\n",
         "sub/a.md": "# A\n\nnarwhal alpha\n", "sub/deeper/b.md": "# B\n\nnarwhal beta\n"}


def _paths(svc: MemoryService) -> set[str]:
    return {d.path for d in svc.documents()}


def test_a_removed_subfolder_and_file_stay_out_of_every_read(tmp_path, svc, start_watcher):
    root = make_tree(tmp_path / "notes", FILES)
    svc.index_paths([root])
    sub, privacy = str(root / "sub"), str(root / "PRIVACY.md")
    assert svc.remove_paths([sub, privacy], exclude=True) == 3
    assert svc.roots() == [str(root)] and svc.exclusions() == sorted([privacy, sub])
    assert _paths(svc) == {str(root / "top.md")}

    (root / "sub" / "a.md").write_text("# A\n\nnarwhal alpha edited\n")
    (root / "PRIVACY.md").write_text("# Privacy\n\nnarwhal secret edited\n")
    again = svc.index_paths([root])  # a re-read of the library folder (F5, Re-index all)
    assert _paths(svc) == {str(root / "top.md")} and sorted(again.excluded) == sorted([privacy, sub])
    named = svc.index_paths([str(root / "sub" / "a.md"), privacy], embed=False)  # what a watch batch hands over
    assert _paths(svc) == {str(root / "top.md")} and not named.included_again
    plan = catch_up_plan(str(root), svc.indexed_under(str(root)), svc.settings.ingest, excluded=svc.exclusions())
    assert plan is not None and not plan, "the catch-up at start reads nothing removed"

    start_watcher()  # its start-up catch-up, then live events
    (root / "sub" / "deeper" / "new.md").write_text("# New\n\nnarwhal gamma\n")
    (root / "PRIVACY.md").write_text("# Privacy\n\nnarwhal secret edited twice\n")
    (root / "top.md").write_text("# Top\n\nkiwi orchard sentinel\n")  # written last: once it is in, so are the rest
    wait_for(lambda: keyword_hits(svc, "sentinel"), what="the edit of a file still in the library")
    assert keyword_hits(svc, "narwhal") == [] and _paths(svc) == {str(root / "top.md")}

    named = svc.index_paths([privacy], include_excluded=True)  # the person names it: `index PATH`, a drop
    assert named.included_again == [privacy] and svc.exclusions() == [sub]
    assert keyword_hits(svc, "secret") == [privacy]
    inside = svc.index_paths([str(root / "sub" / "a.md")], include_excluded=True)
    assert [o.status for o in inside.outcomes] == ["skipped"]
    assert "removed from the library" in inside.outcomes[0].reason
    assert svc.include_paths([root]) == [sub] and svc.exclusions() == []  # `include` lifts everything below
    svc.index_paths([root])
    assert len(keyword_hits(svc, "narwhal")) == 4


def test_removing_a_library_folder_unregisters_it_and_forgets_its_exclusions(tmp_path, svc):
    root = make_tree(tmp_path / "notes", FILES)
    svc.index_paths([root])
    svc.remove_paths([str(root / "sub")], exclude=True)
    assert svc.remove_paths([str(root / "no-such-note.md")], exclude=True) == 0
    assert svc.exclusions() == [str(root / "sub")], "a typo is not recorded as an exclusion"
    svc.remove_paths([root], exclude=True)
    assert svc.roots() == [] and svc.exclusions() == [] and _paths(svc) == set()
    svc.index_paths([root])  # added again: a fresh start, everything in it
    assert len(_paths(svc)) == 4


def test_a_file_deleted_on_disk_is_not_excluded(tmp_path, svc, start_watcher):
    """Only the person's removal excludes: a file the watcher saw deleted comes back when it is written again."""
    root = make_tree(tmp_path / "notes", {"a.md": "alpha", "b.md": "bravo"})
    svc.index_paths([root])
    start_watcher()
    (root / "b.md").unlink()
    wait_for(lambda: _paths(svc) == {str(root / "a.md")}, what="the deletion")
    (root / "b.md").write_text("bravo returns\n")
    wait_for(lambda: keyword_hits(svc, "returns") == [str(root / "b.md")], what="the file written again")
    assert svc.exclusions() == []


def test_the_readme_example_remove_then_watch_does_not_read_it_again(tmp_path):
    config = write_settings(tmp_path / "config", embedder={"kind": "hash"}, watch={"quiet_ms": 100})
    db = tmp_path / "x.db"
    root = make_tree(tmp_path / "project", {"docs/PRIVACY.md": "# Privacy\n\nnarwhal policy\n",
                                            "docs/GUI.md": "# GUI\n\nwindow\n"})
    assert run_cli(db, "index", "-q", str(root), config=config).returncode == 0
    res = run_cli(db, "remove", "-q", str(root / "docs" / "PRIVACY.md"), config=config)
    assert res.returncode == 0 and "removed 1 document(s)" in res.stdout
    said = res.stdout
    proc = spawn_cli(db, "watch", config=config, logs=tmp_path / "log")
    out = tmp_path / "log" / "stdout"
    try:
        wait_for(lambda: any(w in out.read_text() for w in ("up to date", "caught up")), timeout=60,
                 what="watch's catch-up at start")
        (root / "docs" / "PRIVACY.md").write_text("# Privacy\n\nnarwhal policy, edited\n")
        (root / "docs" / "GUI.md").write_text("# GUI\n\nwindow sentinel\n")
        wait_for(lambda: "docs/GUI.md" in out.read_text(), timeout=30, what="the GUI.md edit")
    finally:
        proc.send_signal(signal.SIGINT)
        rc, stdout, err = finish(proc, timeout=60)
    assert rc == 0, err
    assert "PRIVACY" not in stdout, stdout  # before: "caught up …: indexed 1: project/docs/PRIVACY.md" at once
    assert f"desktop-memory include {root / 'docs' / 'PRIVACY.md'}" in said, said  # `remove` says how to undo it
    listed = run_cli(db, "list", config=config).stdout
    assert f"excluded {'-':>5} chunks  {root / 'docs' / 'PRIVACY.md'}" in listed, listed
    assert not [line for line in listed.splitlines() if line.startswith("indexed") and "PRIVACY" in line]
    res = run_cli(db, "index", "-q", str(root / "docs" / "PRIVACY.md"), config=config)
    assert res.returncode == 0 and "included again" in res.stdout, res.stdout


def test_the_catch_up_counts_only_the_files_it_checked_not_a_removal_in_progress(tmp_path, svc):
    """Before: "up to date (checked 4 files)" while two of them were a removal still in progress (the QA walk saw
    "checked 3008 files" for a folder of a few hundred)."""
    import threading

    from desktop_memory.watch import Watcher
    from desktop_memory.watch.update import CATCH_UP

    from .conftest import Recorder

    root = make_tree(tmp_path / "notes", FILES)
    svc.index_paths([root])
    rec = Recorder()
    watcher = Watcher(svc, on_update=rec)  # not started: nothing finishes the removal below meanwhile
    stopped = threading.Event()
    stopped.set()  # a `remove` killed at once: its intent is recorded, its documents are still listed
    assert svc.remove_paths([str(root / "sub")], cancel=stopped, exclude=True) == 0
    assert svc.pending_removals() == [str(root / "sub")] and len(svc.indexed_under(str(root))) == 4
    watcher._catch_up(str(root))
    said = [u.message for u in rec.of(CATCH_UP)]
    assert len(said) == 1 and "checked 2 files" in said[0], said


def test_a_removal_the_watch_finishes_at_start_is_said_with_its_size_then_its_end(tmp_path, svc, start_watcher):
    """Before: `watch` finished a removal a killed `remove` left without a word (issue 30 item 5)."""
    import threading

    from desktop_memory.embed.hashing import HashEmbedder
    from desktop_memory.service import MemoryService
    from desktop_memory.watch.update import CATCH_UP

    root = make_tree(tmp_path / "notes", FILES)
    # another process (its writes run on its own scheduler, as every write does): a `remove` killed at once
    killed = MemoryService(svc.settings, db_path=svc.db_path, embedder=HashEmbedder())
    killed.index_paths([root])
    stopped = threading.Event()
    stopped.set()  # its intent recorded, its documents still listed
    killed.remove_paths([str(root / "sub")], cancel=stopped, exclude=True)
    killed.close()
    _watcher, rec = start_watcher()  # its scheduler finishes the removal first thing
    wait_for(lambda: any("finished the removal" in u.message for u in rec.of(CATCH_UP)), what="the end said")
    said = [u.message for u in rec.of(CATCH_UP)]
    assert any(m.startswith(f"finishing a removal left unfinished: {root / 'sub'}") for m in said), said
    assert any(m == f"finished the removal of {root / 'sub'}: 2 documents removed" for m in said), said
    assert svc.pending_removals() == [] and keyword_hits(svc, "narwhal") == [str(root / "PRIVACY.md")]
