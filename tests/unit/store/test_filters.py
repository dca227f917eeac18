"""store/filters.py: a path filter is the one "inside a folder" rule (desktop_memory.paths) in SQL, so a folder
``notes`` never brings in its sibling ``notes2`` (a string prefix did: ``notes2/`` starts with ``notes``)."""

from __future__ import annotations

import pytest

from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.models import ChunkDraft, Location, SearchFilters
from desktop_memory.paths import is_inside
from desktop_memory.service import MemoryService
from desktop_memory.store import Store
from desktop_memory.store.filters import filter_sql

PATHS = ["/lib/notes", "/lib/notes/a.md", "/lib/notes/sub/b.md", "/lib/notes2/c.md", "/lib/notes-old/d.md",
         "/lib/notes.md", "/lib/other/e.md", "C:\\w\\notes\\f.md", "C:\\w\\notes2\\g.md"]


@pytest.fixture()
def store(tmp_path):
    s = Store(tmp_path / "f.db")
    for p in PATHS:
        s.write_document(path=p, kind="markdown", language=None, title=None, size=1, mtime=1.0,
                         content_hash="h" + p, chunks=[ChunkDraft("text of " + p, Location(char_end=8))],
                         dedupe_keys=[p])
    yield s
    s.close()


def _matching(store: Store, filters: SearchFilters) -> list[str]:
    where, params = filter_sql(filters)
    return sorted(r[0] for r in store.conn.execute(f"select d.path from documents d where {where}", params))


@pytest.mark.parametrize("folder", ["/lib/notes", "/lib/notes/", "C:\\w\\notes", "/lib/notes/a.md", "/"])
def test_a_path_filter_keeps_the_folder_and_what_is_below_it(store: Store, folder: str) -> None:
    expected = sorted(p for p in PATHS if is_inside(p, folder))
    assert _matching(store, SearchFilters(path_prefix=folder)) == expected
    if folder != "/":
        assert "/lib/notes2/c.md" not in expected and "C:\\w\\notes2\\g.md" not in expected


def test_an_excluded_path_takes_what_is_below_it_and_not_its_sibling(store: Store) -> None:
    kept = _matching(store, SearchFilters(exclude_paths=("/lib/notes",)))
    assert kept == sorted(p for p in PATHS if not is_inside(p, "/lib/notes"))
    assert "/lib/notes2/c.md" in kept


@pytest.mark.parametrize("backend", ["hybrid", "keyword", "dense", "bm25"])
def test_a_search_in_notes_finds_nothing_from_notes2(tmp_path, backend: str) -> None:
    lib = tmp_path / "lib"
    for folder in ("notes", "notes2"):
        (lib / folder).mkdir(parents=True)
        (lib / folder / f"kiwi-{folder}.md").write_text(f"# Kiwi\n\nA kiwi fruit salad recipe kept in {folder}.\n")
    (lib / "other").mkdir()
    for i, topic in enumerate(["tax forms and receipts", "bicycle repair notes", "garden planting plan",
                               "meeting minutes from monday", "travel packing list"]):
        (lib / "other" / f"doc{i}.md").write_text(f"# Other {i}\n\nAbout {topic}, nothing else.\n")
    svc = MemoryService(Settings(), db_path=tmp_path / "idx.db", embedder=HashEmbedder(64))
    try:
        svc.index_paths([lib])
        found = svc.search_outcome("kiwi fruit salad", backend=backend, top_k=5,
                                   filters=SearchFilters(path_prefix=str(lib / "notes")))
        assert [r.source for r in found.results] == [str(lib / "notes" / "kiwi-notes.md")]
    finally:
        svc.close()
