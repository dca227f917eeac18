"""Several documents per transaction (Store.write_documents, ingest/write_batch.py) on a real SQLite file.

A batch must end exactly as if its documents had been written one at a time, commit all of them or none, and the
pipeline must use it: fewer commits than documents, outcomes in walk order, nothing read before Cancel lost."""

from __future__ import annotations

import threading

import apsw
import pytest

from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.ingest import pipeline
from desktop_memory.models import ChunkDraft, Location
from desktop_memory.service import MemoryService
from desktop_memory.store import Store
from desktop_memory.store.doc_writes import DocumentWrite


def _doc(path: str, *texts: str, keys: list[str] | None = None) -> DocumentWrite:
    chunks, pos = [], 0
    for t in texts:
        chunks.append(ChunkDraft(text=t, location=Location(char_start=pos, char_end=pos + len(t))))
        pos += len(t) + 1
    return DocumentWrite(path=path, kind="text", language=None, title=None, size=pos, mtime=1.0,
                         content_hash="h-" + path + str(len(texts)), chunks=chunks,
                         dedupe_keys=keys or [f"{path}:{i}" for i in range(len(texts))])


def _docs() -> list[DocumentWrite]:
    """Duplicates inside the batch, a path written twice, and a holder taken over by a path that sorts first."""
    return [
        _doc("/lib/m.md", "shared footer text", "mango only", keys=["F", "m"]),
        _doc("/lib/z.md", "shared footer text", "zebra only", keys=["F", "z"]),
        _doc("/lib/a.md", "shared footer text", "apple only", keys=["F", "a"]),  # sorts first: takes F over
        _doc("/lib/z.md", "zebra rewritten", "shared footer text", keys=["z2", "F"]),  # z replaced in the batch
        _doc("/lib/k.md", "kiwi only"),
    ]


def _state(s: Store) -> tuple[list[tuple], list[tuple], list[int]]:
    chunks = s.conn.execute("select c.id, d.path, c.ord, c.text, c.dedupe_key, c.dup_of from chunks c "
                            "join documents d on d.id = c.doc_id order by c.id").fetchall()
    docs = s.conn.execute("select path, status, n_chunks, n_dups from documents order by path").fetchall()
    fts = [r[0] for r in s.conn.execute("select rowid from chunks_fts where chunks_fts match 'footer OR only' "
                                        "order by rowid")]
    return chunks, docs, fts


def _fts_rows(s: Store) -> int:
    return int(s.conn.execute("select count(*) from chunks_fts_docsize").fetchone()[0])


def _canonical(s: Store) -> int:
    return int(s.conn.execute("select count(*) from chunks where dup_of is null").fetchone()[0])


def test_a_batch_ends_exactly_as_one_document_at_a_time(tmp_path):
    one, batch = Store(tmp_path / "one.db"), Store(tmp_path / "batch.db")
    for d in _docs():
        one.write_documents([d])
    results = batch.write_documents(_docs())
    assert [r.duplicates for r in results] == [0, 1, 0, 1, 0]
    assert _state(batch) == _state(one)
    assert _fts_rows(batch) == _canonical(batch) == 5  # one FTS row per canonical chunk, none for duplicates
    holder = batch.conn.execute("select d.path from chunks c join documents d on d.id = c.doc_id "
                                "where c.dedupe_key = 'F' and c.dup_of is null").fetchall()
    assert holder == [("/lib/a.md",)]
    assert batch.check_integrity() == [] and one.check_integrity() == []
    one.close()
    batch.close()


def test_a_failed_batch_leaves_no_half_document_and_keeps_what_was_committed(tmp_path):
    s = Store(tmp_path / "a.db")
    s.write_documents([_doc("/lib/kept.md", "committed before the batch")])
    before = (_state(s), s.content_version())
    # a real failure half-way through the batch: SQLite refuses the third document's row
    s.conn.execute("create temp trigger refuse before insert on documents when new.path = '/lib/a.md' "
                   "begin select raise(abort, 'refused'); end")
    with pytest.raises(apsw.ConstraintError):
        s.write_documents(_docs())
    assert (_state(s), s.content_version()) == before  # m.md and z.md, written before the failure, are gone too
    assert _fts_rows(s) == _canonical(s) == 1
    assert s.check_integrity() == []
    s.conn.execute("drop trigger temp.refuse")
    s.write_documents(_docs())  # the same batch goes through once the cause is gone
    assert _fts_rows(s) == _canonical(s) == 6
    s.close()


def _files(folder, n: int) -> list[str]:
    folder.mkdir()
    names = [f"note{i:02d}.txt" for i in range(n)]
    for i, name in enumerate(names):
        (folder / name).write_text(f"Note {i} mentions the word token{i} and shared boilerplate.\n", encoding="utf-8")
    return names


def _count_commits(store: Store) -> list[int]:
    commits = [0]

    def hook() -> bool:
        commits[0] += 1
        return False  # False lets the commit go ahead

    store.conn.setcommithook(hook)
    return commits


def test_the_pipeline_writes_several_documents_per_commit(tmp_path):
    names = _files(tmp_path / "notes", 30)
    svc = MemoryService(Settings(), db_path=tmp_path / "idx.db", embedder=HashEmbedder(64))
    try:
        with svc.writing() as store:
            commits = _count_commits(store)
            summary = pipeline.index_paths(store, [tmp_path / "notes"], svc.settings, None, embed=False)
            store.conn.setcommithook(None)
            assert summary.indexed == 30 and summary.failed == 0
            assert commits[0] < 10  # one transaction per document committed 30 times (and more)
            assert [o.path.rsplit("/", 1)[-1] for o in summary.outcomes] == names  # walk order, real outcomes
            assert all(o.status == "indexed" and o.chunks == 1 for o in summary.outcomes)
            assert _fts_rows(store) == _canonical(store) == 30
            assert store.check_integrity() == []
        assert len(svc.search_outcome("token17", backend="keyword").results) == 1
    finally:
        svc.close()


def test_an_old_batch_is_written_before_the_next_file_is_read(tmp_path, monkeypatch):
    _files(tmp_path / "notes", 6)
    monkeypatch.setattr(pipeline, "WRITE_BATCH_S", 0.0)  # every document is "old" by the time the next is read
    svc = MemoryService(Settings(), db_path=tmp_path / "idx.db", embedder=HashEmbedder(64))
    try:
        with svc.writing() as store:
            commits = _count_commits(store)
            summary = pipeline.index_paths(store, [tmp_path / "notes"], svc.settings, None, embed=False)
            store.conn.setcommithook(None)
        assert summary.indexed == 6 and commits[0] >= 6
    finally:
        svc.close()


def test_cancel_keeps_the_documents_read_before_it(tmp_path, monkeypatch):
    _files(tmp_path / "notes", 12)
    cancel = threading.Event()
    real_read = pipeline.read_document
    reads = [0]

    def read_then_cancel(path, settings):
        reads[0] += 1
        if reads[0] == 5:
            cancel.set()  # seen before the 6th file is read
        return real_read(path, settings)

    monkeypatch.setattr(pipeline, "read_document", read_then_cancel)
    svc = MemoryService(Settings(), db_path=tmp_path / "idx.db", embedder=HashEmbedder(64))
    try:
        summary = svc.index_paths([tmp_path / "notes"], cancel=cancel)
        assert summary.cancelled and summary.indexed == 5
        with svc.reading() as store:
            assert _canonical(store) == _fts_rows(store) == 5
        assert len(svc.search_outcome("token4", backend="keyword").results) == 1
    finally:
        svc.close()
