"""The two-phase indexing pipeline on real files with a real store (fast hash embedder)."""

from __future__ import annotations

import os
import shutil
import threading

import pytest

from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.service import MemoryService


class CountingEmbedder(HashEmbedder):
    """Counts texts embedded, so tests can assert that unchanged files embed nothing."""

    def __init__(self) -> None:
        super().__init__(64)
        self.embedded_texts = 0

    def embed_documents(self, texts):
        self.embedded_texts += len(texts)
        return super().embed_documents(texts)


@pytest.fixture()
def notes(tmp_path, eval_dir):
    root = tmp_path / "notes"
    shutil.copytree(eval_dir / "mddocs" / "fastapi" / "tutorial", root / "tutorial")
    (root / "todo.txt").write_text("Buy milk.\n\nCall the plumber about the leaking tap.\n", encoding="utf-8")
    (root / "script.py").write_text("def leaking_tap():\n    return 'plumber'\n", encoding="utf-8")
    (root / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 100)
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    return root


@pytest.fixture()
def svc(tmp_path):
    emb = CountingEmbedder()
    service = MemoryService(Settings(), db_path=tmp_path / "idx.db", embedder=emb)
    yield service
    service.close()


def test_index_then_reindex_embeds_nothing(svc, notes):
    first = svc.index_paths([notes])
    assert first.indexed > 10 and first.failed == 0
    assert first.chunks_embedded == first.chunks_added > 0
    reasons = {os.path.basename(o.path): o.reason for o in first.outcomes if o.status == "skipped"}
    assert reasons["image.png"].startswith("binary file")
    assert ".git" in reasons and "ignored folder" in reasons[".git"]
    before = svc.embedder.embedded_texts
    second = svc.index_paths([notes])
    assert second.indexed == 0 and second.unchanged == first.indexed and second.skipped == first.skipped
    assert svc.embedder.embedded_texts == before
    assert svc.check() == []


def test_only_the_edited_file_is_reembedded(svc, notes):
    svc.index_paths([notes])
    before = svc.embedder.embedded_texts
    target = notes / "todo.txt"
    target.write_text("Buy oat milk.\n\nCall the plumber about the leaking tap.\n", encoding="utf-8")
    summary = svc.index_paths([notes])
    assert summary.indexed == 1
    assert [o.path for o in summary.outcomes if o.status == "indexed"] == [str(target)]
    with svc.reading() as store:
        doc = store.get_document(str(target))
        assert doc is not None
        assert svc.embedder.embedded_texts - before == summary.chunks_embedded == doc.n_chunks
    assert svc.search_outcome("oat milk", backend="keyword").results[0].source == str(target)



def _sections(changed: str = "") -> str:
    topics = ["sourdough starters", "bicycle gear ratios", "tidal energy", "medieval bookbinding"]
    parts = []
    for i, topic in enumerate(topics):
        body = " ".join(f"Sentence {j} about {topic} and why it matters for the {topic} section." for j in range(12))
        parts.append(f"## {topic.title()}\n\n{changed if i == 2 and changed else body}\n")
    return "# Handbook\n\n" + "\n".join(parts)


def test_editing_one_section_reembeds_only_its_chunks(svc, tmp_path):
    folder = tmp_path / "handbook"
    folder.mkdir()
    doc = folder / "handbook.md"
    doc.write_text(_sections(), encoding="utf-8")
    first = svc.index_paths([folder])
    with svc.reading() as store:
        n_chunks = store.get_document(str(doc)).n_chunks
        old = dict(store.conn.execute("select c.text, v.embedding from chunks c join chunk_vectors v on v.id = c.id"))
    assert first.chunks_embedded == n_chunks >= 4
    before = svc.embedder.embedded_texts

    doc.write_text(_sections("Tidal lagoons store seawater behind a wall and release it through turbines."),
                   encoding="utf-8")
    second = svc.index_paths([folder])
    assert second.indexed == 1
    with svc.reading() as store:
        new_rows = store.conn.execute(
            "select c.text, v.embedding from chunks c join chunk_vectors v on v.id = c.id").fetchall()
        pending = store.pending_count()
    changed = [t for t, _ in new_rows if t not in old]
    assert len(changed) == 1 and "lagoons" in changed[0]
    assert svc.embedder.embedded_texts - before == second.chunks_embedded == 1
    assert second.vectors_reused == len(new_rows) - 1 >= 3
    assert all(old[t] == v for t, v in new_rows if t in old)  # kept vectors are the very same bytes
    assert pending == 0 and svc.check() == []
    hits = svc.search_outcome("Bicycle Gear Ratios", backend="dense").results
    assert "bicycle gear ratios" in hits[0].text.lower()


def test_touch_without_change_reads_but_does_not_reembed(svc, notes):
    svc.index_paths([notes])
    before = svc.embedder.embedded_texts
    os.utime(notes / "todo.txt", (1_000_000, 1_000_000))
    summary = svc.index_paths([notes])
    assert summary.indexed == 0 and svc.embedder.embedded_texts == before


def test_deleted_files_leave_the_index(svc, notes):
    svc.index_paths([notes])
    (notes / "todo.txt").unlink()
    summary = svc.index_paths([notes])
    assert summary.removed == 1
    with svc.reading() as store:
        assert store.get_document(str(notes / "todo.txt")) is None
    assert not svc.search_outcome("plumber milk", backend="keyword").results or all(
        r.source != str(notes / "todo.txt") for r in svc.search_outcome("plumber milk", backend="keyword").results)


def test_keyword_searchable_before_embedding(svc, notes):
    summary = svc.index_paths([notes], embed=False)
    assert summary.chunks_embedded == 0
    st = svc.stats()
    assert st.vectors == 0 and st.pending_vectors > 0
    outcome = svc.search_outcome("leaking tap plumber", backend="hybrid")
    hits = outcome.results
    assert hits and hits[0].source.endswith(("todo.txt", "script.py"))
    assert any("semantic lane off" in n for n in outcome.notes)  # notes travel with the outcome
    assert svc.embed_pending().chunks_embedded == st.pending_vectors
    assert svc.stats().pending_vectors == 0


def test_cancel_keeps_a_consistent_index(svc, notes, monkeypatch):
    # every file reports progress (unthrottled), so the cancel lands after the third file on any machine speed
    monkeypatch.setattr("desktop_memory.ingest.pipeline.PROGRESS_INTERVAL_S", 0.0)
    cancel = threading.Event()
    at_cancel = []

    def progress(p):
        if p.files_done >= 3 and not cancel.is_set():
            at_cancel.append(p.files_done)
            cancel.set()

    summary = svc.index_paths([notes], progress=progress, cancel=cancel)
    assert summary.cancelled
    # the job stops before the next file: nothing after the cancel point was written
    recorded = sum(svc.stats().documents.values())  # indexed, skipped and failed files all count as done
    assert 3 <= recorded <= at_cancel[0] + 1 < 53
    assert svc.check() == []
    rest = svc.index_paths([notes])  # finishes what was left; committed documents are unchanged
    assert rest.unchanged + rest.skipped >= 3 and not rest.cancelled
    assert svc.stats().pending_vectors == 0


def test_remove_folder_and_stats(svc, notes):
    svc.index_paths([notes])
    n = svc.remove_paths([notes / "tutorial"])
    assert n > 10
    docs = svc.documents()
    assert all(not d.path.startswith(str(notes / "tutorial")) for d in docs)
    assert svc.check() == []


def test_model_change_keeps_the_librarys_own_model_until_reembedded(svc, notes, tmp_path):
    svc.index_paths([notes])
    other = MemoryService(Settings(), db_path=tmp_path / "idx.db", embedder=HashEmbedder(32))
    summary = other.index_paths([notes / "todo.txt"], force=True)
    # issue 30: the library's own model (available here) embeds the new passage; nothing is mixed or refused
    assert not summary.embed_error
    st = other.stats()
    assert st.model_id == "hash-test-64" and st.pending_vectors == 0 and st.configured_model == "hash-test-32"
    assert other.search_outcome("plumber", backend="hybrid").results
    re = other.reembed()
    assert re.chunks_embedded == other.stats().vectors > 0 and other.stats().model_id == "hash-test-32"
    other.close()


def test_a_growing_log_reembeds_only_its_tail(svc, tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    log = folder / "service.log"
    log.write_text("".join(f"2026-11-23T10:{i // 60 % 60:02d}:{i % 60:02d} INFO request {i} served in {i % 97} ms\n"
                           for i in range(6000)), encoding="utf-8")
    first = svc.index_paths([folder])
    assert first.chunks_embedded == first.chunks_added > 100
    before = svc.embedder.embedded_texts
    with open(log, "a", encoding="utf-8") as fh:
        fh.write("2026-11-23T11:00:00 ERROR disk quota exceeded on /var/spool\n")
    second = svc.index_paths([folder])
    assert second.indexed == 1 and 1 <= second.chunks_embedded <= 2
    assert svc.embedder.embedded_texts - before == second.chunks_embedded
    assert second.vectors_reused + second.chunks_embedded == second.chunks_added
    assert svc.stats().pending_vectors == 0 and svc.check() == []
    assert "quota exceeded" in svc.search_outcome("disk quota exceeded", backend="hybrid").results[0].text
