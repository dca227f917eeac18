"""QA walk of issue 30 item 4: while an interrupted removal waits for the next writer, what it still holds is left
out *inside* the search lanes. Before: the search ran, then dropped the doomed rows, so a search asking for 3
results gave fewer (the removed folder's passages took the top-k's places) and its notes counted passages nobody
was shown ("3 of these passages are not embedded yet" above "No passages match")."""

from __future__ import annotations

from pathlib import Path

from desktop_memory.config import EmbedderSettings, Settings
from desktop_memory.models import SearchFilters
from desktop_memory.service import MemoryService

WORD = "giraffes"


def _tree(folder: Path, n: int, text: str) -> Path:
    folder.mkdir(parents=True)
    for i in range(n):
        (folder / f"n{i:04d}.txt").write_text(f"{text} {WORD} number {i}\n", encoding="utf-8")
    return folder


def _interrupted(tmp_path: Path) -> tuple[MemoryService, Path, Path]:
    """A library whose removal of ``gone`` was recorded and had not started (a `remove` killed at once)."""
    gone = _tree(tmp_path / "lib" / "gone", 300, "the doomed note about")
    kept = _tree(tmp_path / "lib" / "kept", 5, "a kept note about")
    svc = MemoryService(Settings(embedder=EmbedderSettings(kind="hash")), db_path=tmp_path / "m.db")
    svc.index_paths([gone], embed=False)  # its passages wait for vectors; the kept ones have theirs
    svc.index_paths([kept], embed=True)
    with svc.writing() as store:
        store.begin_removal([str(gone)], exclude=[str(gone)])
    return svc, gone, kept


def test_a_pending_removal_takes_no_place_in_the_top_k(tmp_path):
    svc, _gone, kept = _interrupted(tmp_path)
    try:
        for backend in ("keyword", "hybrid", "bm25"):
            out = svc.search_outcome(WORD, backend=backend, top_k=3)
            assert [Path(r.source).parent for r in out.results] == [kept] * 3, backend
            assert all(Path(f.source).parent == kept for f in out.files), backend
        # a filter of the person's own is kept beside the removal's
        out = svc.search_outcome(WORD, backend="keyword", top_k=10, filters=SearchFilters(path_glob="*n000[01].txt"))
        assert sorted(Path(r.source).name for r in out.results) == ["n0000.txt", "n0001.txt"]
        assert {Path(r.source).parent for r in out.results} == {kept}
    finally:
        svc.close()


def test_notes_count_only_what_is_shown(tmp_path):
    svc, _gone, kept = _interrupted(tmp_path)
    try:
        out = svc.search_outcome(f"doomed {WORD}", backend="hybrid", top_k=10)
        assert all(Path(r.source).parent == kept for r in out.results)
        assert len(out.results) == 5
        # every passage shown has its vector: no note about passages "not embedded yet" (the removed folder's)
        assert not [n for n in out.notes if "not embedded" in n], out.notes
    finally:
        svc.close()


def test_stats_and_list_sources_say_a_removal_is_in_progress(tmp_path, hash_config):
    """`stats` counted the interrupted removal's documents and chunks (300 documents, "300 waiting for a vector":
    `embed` would embed them) with no word of the removal; MCP list_sources' header too, above folders that add
    up to less."""
    from desktop_memory.mcp_server.library import Library
    from desktop_memory.mcp_server.tools import list_sources

    from .conftest import run_cli

    svc, gone, _kept = _interrupted(tmp_path)
    try:
        st = svc.stats()
        assert st.removing == [str(gone)] and st.removing_documents == 300
        lib = Library(svc.settings, db_path=tmp_path / "m.db")
        text, _out = list_sources(lib, svc, None, None, 50)
        assert "A removal is in progress: 300 file(s) counted above" in text and "gone" not in text, text
    finally:
        svc.close()
    res = run_cli(tmp_path / "m.db", "stats", config=hash_config)
    assert res.returncode == 0 and f"removing   300 document(s) of {gone} still to remove" in res.stdout, res.stdout
    svc = MemoryService(Settings(embedder=EmbedderSettings(kind="hash")), db_path=tmp_path / "m.db")
    try:
        svc.finish_interrupted_removal()  # what every writer does first: nothing left to say
        assert svc.stats().removing_documents == 0 and svc.stats().removing == []
    finally:
        svc.close()
