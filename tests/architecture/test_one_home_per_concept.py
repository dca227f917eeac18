"""One place per concept (issue 24): each rule below used to live in two to four modules, sometimes differing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from desktop_memory.config import SearchSettings, Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.errors import UserError
from desktop_memory.ingest import detect
from desktop_memory.ingest.pipeline import embed_queue, held
from desktop_memory.models import HEADING_SEP, ChunkDraft, Location
from desktop_memory.paths import is_inside
from desktop_memory.retrieve.filters import MAX_QUERY_CHARS, clean_query
from desktop_memory.retrieve.searcher import Searcher
from desktop_memory.store import Store


def _write(store: Store, path: str, kind: str, *chunks: ChunkDraft) -> None:
    store.write_document(path=path, kind=kind, language=None, title=None, size=10, mtime=1.0,
                         content_hash="h-" + path, chunks=list(chunks),
                         dedupe_keys=[f"{path}:{i}" for i in range(len(chunks))])


@pytest.mark.parametrize(("path", "folder", "inside"), [
    ("/lib/notes/a.md", "/lib/notes", True),
    ("/lib/notes/a.md", "/lib/notes/", True),
    ("/lib/notes", "/lib/notes/", True),
    ("/lib/notes-old/a.md", "/lib/notes", False),
    ("/lib/not", "/lib/notes", False),
    ("C:\\lib\\notes\\a.md", "C:\\lib\\notes", True),
    ("C:\\lib\\notes2\\a.md", "C:\\lib\\notes", False),
    ("/anything", "/", True),
])
def test_one_inside_rule_for_posix_and_windows_paths(path: str, folder: str, inside: bool) -> None:
    assert is_inside(path, folder) is inside


def test_one_query_limit_and_the_searcher_applies_it(tmp_path: Path) -> None:
    assert MAX_QUERY_CHARS == 2000
    assert clean_query("  " + "word " * 1000 + "\x00") == "word " * 400
    store = Store(tmp_path / "m.db")
    with pytest.raises(UserError, match="number of results"):
        Searcher(SearchSettings()).search(store, None, "anything", backend="keyword", top_k=10**6)


def test_every_reader_opens_files_non_blocking_and_not_inherited(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    real_open = os.open

    def spy(path: str, flags: int, *args: object) -> int:
        seen.append(flags)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", spy)
    f = tmp_path / "a.txt"
    f.write_text("hello", encoding="utf-8")
    assert detect.read_head(f) == b"hello"
    from desktop_memory.ingest.hashing import hash_file
    from desktop_memory.ingest.readers import open_checked

    hash_file(f)
    os.close(open_checked(str(f)))
    wanted = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    assert len(seen) == 3 and all(flags & wanted == wanted for flags in seen)


def test_a_stored_slide_reads_back_as_a_slide_everywhere(tmp_path: Path) -> None:
    store = Store(tmp_path / "m.db")
    loc = Location(heading_path=("Deck", "Results"), slide=4, char_start=0, char_end=20)
    _write(store, "/lib/deck.pptx", "slides", ChunkDraft("Deck › Results\nsales grew", loc))
    cid = store.reads.fts_match("chunks_fts", "sales", 5, None)[0][0]
    passage = store.passage(cid)
    assert passage is not None and passage.passage.location == loc  # MCP get_passage
    assert store.reads.chunk_rows([cid])[cid].location() == loc  # search results
    assert HEADING_SEP.join(loc.heading_path) in loc.describe()


def test_indexing_never_changes_the_shared_embedder(tmp_path: Path) -> None:
    class DimensionChecking(HashEmbedder):
        expected_dim: int | None = None  # as the Ollama embedder has

    store = Store(tmp_path / "m.db")
    _write(store, "/lib/a.txt", "text", ChunkDraft("some text", Location(char_end=9)))
    embedder = DimensionChecking(16)
    assert embed_queue(held(store), held(store), embedder) == 1
    assert embedder.expected_dim is None


def test_the_watcher_reads_only_the_folder_it_catches_up(tmp_path: Path) -> None:
    from desktop_memory.service import MemoryService

    svc = MemoryService(Settings(), db_path=tmp_path / "m.db", embedder=HashEmbedder(16))
    try:
        with svc.writing() as store:
            for path in ("/lib/a/x.txt", "/lib/a/sub/y.txt", "/lib/ab/z.txt", "/lib/b.txt"):
                _write(store, path, "text", ChunkDraft("text of " + path, Location(char_end=5)))
        assert sorted(svc.indexed_under("/lib/a")) == ["/lib/a/sub/y.txt", "/lib/a/x.txt"]
        assert svc.indexed_under("/lib/a/")["/lib/a/x.txt"] == (10, 1.0)
    finally:
        svc.close()
