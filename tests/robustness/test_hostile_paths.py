"""Issue 21 §1: a symlink inside a library folder is no way out of it, whichever entry point names it.

The walk skips symlinks unless ``[ingest] follow_symlinks`` is on; a path named from outside the walk (the CLI's
``index`` arguments, a GUI drop or a launch's ``show`` request, both of which reach ``MemoryService.index_paths``)
follows the same rule through one check (``paths_guard.checked_path``) with one message. MCP is covered in
tests/mcp/test_mcp_hostile.py. The folders are made here in tmp; a secret word lives outside the library.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from desktop_memory.config import EmbedderSettings, IngestSettings, Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.errors import OutsideLibrary
from desktop_memory.paths_guard import checked_glob, checked_path
from desktop_memory.service import MemoryService

from .conftest import run_cli

SECRET = "outsidesecretword"


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    lib = tmp_path / "lib"
    outside = tmp_path / "outside"
    sibling = tmp_path / "lib-sibling"
    (lib / "sub").mkdir(parents=True)
    outside.mkdir()
    sibling.mkdir()
    (lib / "note.md").write_text("# Note\n\nA note about the harbour.\n")
    (outside / "secret.md").write_text(f"# Secret\n\nThe {SECRET} lives here.\n")
    (sibling / "other.md").write_text("# Other\n\nA sibling that shares a name prefix.\n")
    os.symlink("../outside", lib / "escape")
    os.symlink("../outside/secret.md", lib / "escfile.md")
    os.symlink("../../outside", lib / "sub" / "deep")
    return {"lib": lib, "outside": outside, "sibling": sibling, "tmp": tmp_path}


def _service(tmp: Path, follow: bool = False) -> MemoryService:
    settings = Settings(db_path=str(tmp / "memory.db"), embedder=EmbedderSettings(kind="hash"),
                        ingest=IngestSettings(follow_symlinks=follow))
    return MemoryService(settings, embedder=HashEmbedder(64))


def _escapes(lib: Path) -> list[str]:
    return [str(lib / "escape"), str(lib / "escfile.md"), str(lib / "escape" / "secret.md"),
            str(lib / "sub" / "deep"), str(lib / "sub" / "deep" / "secret.md")]


def test_service_refuses_every_escape_and_reads_nothing(layout):
    """The GUI's drops and a launch's ``show`` paths reach the indexer here."""
    svc = _service(layout["tmp"])
    try:
        svc.index_paths([layout["lib"]])
        for path in _escapes(layout["lib"]):
            with pytest.raises(OutsideLibrary) as info:
                svc.index_paths([path])
            assert str(info.value) == (f"{path!r} is not a folder in the library: name a library folder, or a file "
                                       "or folder inside one (a link leading out of it is not followed).")
        with pytest.raises(OutsideLibrary):  # one bad path refuses the batch before anything is read
            svc.index_paths([layout["lib"] / "note.md", layout["lib"] / "escape"])
        assert svc.search_outcome(SECRET, backend="keyword").results == []
        assert not [d for d in svc.documents() if "outside" in d.path and "escape" not in d.path]
    finally:
        svc.close()


def test_following_symlinks_is_the_settings_choice_for_walk_and_entry_points_alike(layout):
    svc = _service(layout["tmp"], follow=True)
    try:
        svc.index_paths([layout["lib"]])
        walked = {d.path for d in svc.documents()}
        assert str(layout["lib"] / "escfile.md") in walked, "the walk follows the link under this setting"
        svc.index_paths([layout["lib"] / "escape"])  # and so may a named path
        assert [r.source for r in svc.search_outcome(SECRET, backend="keyword").results]
    finally:
        svc.close()


def test_a_new_folder_named_by_the_person_is_still_added(layout):
    svc = _service(layout["tmp"])
    try:
        svc.index_paths([layout["lib"]])
        summary = svc.index_paths([layout["sibling"]])  # shares a name prefix with lib: not inside it
        assert summary.indexed == 1
        # a library folder reached through another name (a link to it) is indexed under its own name, once
        alias = layout["tmp"] / "alias"
        os.symlink(layout["lib"], alias)
        svc.index_paths([alias / "note.md"])
        assert not [d for d in svc.documents() if d.path.startswith(str(alias))]
    finally:
        svc.close()


def test_cli_index_refuses_the_escape_with_the_one_message(layout, hash_config):
    db = layout["tmp"] / "cli.db"
    assert run_cli(db, "index", layout["lib"], config=hash_config).returncode == 0
    for path in _escapes(layout["lib"]):
        r = run_cli(db, "index", path, config=hash_config)
        assert r.returncode != 0 and f"{path!r} is not a folder in the library" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr
    r = run_cli(db, "search", SECRET, "--backend", "keyword", config=hash_config)
    assert SECRET not in r.stdout


def test_the_check_itself(layout):
    lib = str(layout["lib"])
    roots = [lib]
    for path in _escapes(layout["lib"]):
        with pytest.raises(OutsideLibrary):
            checked_path(path, roots, follow_symlinks=False, may_add=False)
    assert checked_path(lib + "/note.md", roots, follow_symlinks=False, may_add=False) == lib + "/note.md"
    for outside in ("/etc", str(layout["sibling"]), "~", lib + "/../outside"):
        with pytest.raises(OutsideLibrary):
            checked_path(outside, roots, follow_symlinks=False, may_add=False)
    for glob in ("../../etc/passwd", "notes/../../x", "/etc/*", "~/x*"):
        with pytest.raises(OutsideLibrary):
            checked_glob(glob, roots)
    assert checked_glob("*.md", roots) == "*.md" and checked_glob(lib + "/*.md", roots) == lib + "/*.md"



def test_a_dropped_link_out_of_the_library_is_refused_in_the_window(qtbot, layout):
    """The real window: a drop reaches the same check, the person reads the message, nothing outside is read."""
    from desktop_memory.config import settings_path
    from desktop_memory.gui.main_window import MainWindow
    from tests.gui.helpers import drop, wait_job

    settings = Settings(db_path=str(layout["tmp"] / "gui.db"), embedder=EmbedderSettings(kind="hash"))
    w = MainWindow(settings, service_factory=lambda s: MemoryService(s, embedder=HashEmbedder(64)),
                   settings_path=settings_path())
    qtbot.addWidget(w)
    w.show()
    qtbot.waitUntil(lambda: w.svc is not None and w.stats is not None, timeout=15000)
    drop(w, [layout["lib"]])
    assert wait_job(qtbot, w).indexed == 1
    drop(w, [layout["lib"] / "escape"])
    qtbot.waitUntil(lambda: not w.is_busy(), timeout=60000)
    expected = f"{str(layout['lib'] / 'escape')!r} is not a folder in the library"
    qtbot.waitUntil(lambda: any(expected in t for t in w.banners.texts()), timeout=10000)
    assert not [d for d in w.svc.documents() if "secret" in d.path]
    w.close()
