"""Every stored vector is the embedding of exactly its own chunk's text (issue 11: promoted duplicates)."""

from __future__ import annotations

from pathlib import Path

import apsw
import numpy as np
import pytest

from desktop_memory.config import EmbedderSettings, Settings
from desktop_memory.embed import LocalOnnxEmbedder
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.models import chunk_text_hash
from desktop_memory.service import MemoryService
from desktop_memory.store import Store
from desktop_memory.store.integrity import IntegrityChecks
from desktop_memory.store.migrations import MIGRATIONS, SCHEMA_VERSION

SHARED = (
    "Every request to the service must carry a bearer token in the Authorization header. Tokens expire after "
    "thirty minutes; refresh them with the refresh endpoint before they lapse. A request without a valid token "
    "gets a 401 answer and the body explains which scope was missing, so clients can ask the user to sign in "
    "again rather than retry blindly."
)


def _write(folder: Path, name: str, title: str, section: str, extra: str) -> Path:
    """A file whose shared section is a chunk of its own: long unique sections before and after it."""
    p = folder / name
    filler = " ".join(f"{extra} Detail {i} of {title} concerns only this file." for i in range(14))
    p.write_text(f"# {title}\n\n## Overview\n\n{filler}\n\n## {section}\n\n{SHARED}\n\n"
                 f"## Notes for {title}\n\n{filler}\n", encoding="utf-8")
    return p


def _vectors_and_texts(db: Path) -> list[tuple[int, str, np.ndarray]]:
    conn = apsw.Connection(str(db))
    rows = conn.execute("select c.id, c.text, v.embedding from chunk_vectors v join chunks c on c.id = v.id").fetchall()
    conn.close()
    return [(cid, text, np.frombuffer(blob, dtype="<f4")) for cid, text, blob in rows]


@pytest.fixture(scope="module")
def model() -> LocalOnnxEmbedder:
    emb = LocalOnnxEmbedder(EmbedderSettings())
    emb.load()
    return emb


def test_promoted_duplicate_gets_the_vector_of_its_own_text(tmp_path: Path, model: LocalOnnxEmbedder) -> None:
    """Three files share a section under different headings; the file holding the canonical copy is edited and
    re-indexed; the copy promoted in another file must not keep the vector of the first file's text."""
    folder = tmp_path / "notes"
    folder.mkdir()
    a = _write(folder, "a.md", "Alpha service guide", "Authentication", "Alpha runs on port 8001.")
    _write(folder, "b.md", "Beta client manual", "Signing requests", "Beta retries three times.")
    _write(folder, "c.md", "Gamma operations", "Tokens", "Gamma logs to syslog.")
    svc = MemoryService(Settings(), db_path=tmp_path / "lib.db", embedder=model)
    try:
        first = svc.index_paths([folder])
        assert first.duplicates_collapsed == 2, "b and c point at a's copy of the shared section"
        a.write_text("# Alpha service guide\n\n## Notes\n\nAlpha moved to port 9001; authentication is elsewhere.\n",
                     encoding="utf-8")
        svc.index_paths([a])
        assert svc.check() == []
    finally:
        svc.close()
    rows = _vectors_and_texts(tmp_path / "lib.db")
    assert any(SHARED in text and "Beta client manual" in text for _, text, _ in rows) or any(
        SHARED in text and "Gamma operations" in text for _, text, _ in rows), "the shared section was promoted"
    texts = [text for _, text, _ in rows]
    fresh = model.embed_documents(texts)
    cosines = [float(np.dot(stored, again)) for (_, _, stored), again in zip(rows, fresh, strict=True)]
    assert min(cosines) >= 0.9999, list(zip(texts, cosines, strict=True))


def test_check_reports_a_vector_of_another_text(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    _write(folder, "a.md", "Alpha", "Auth", "one")
    _write(folder, "b.md", "Beta", "Signing", "two")
    db = tmp_path / "lib.db"
    svc = MemoryService(Settings(), db_path=db, embedder=HashEmbedder(32))
    try:
        svc.index_paths([folder])
        assert svc.check() == []
        with svc.writing() as store:
            conn = store.conn
            ids = [r[0] for r in conn.execute("select id from chunk_vectors order by id limit 2")]
            other = conn.execute("select text from chunks where id = ?", (ids[1],)).fetchone()[0]
            with conn:  # what the old promotion did: a vector computed for another chunk's text
                conn.execute("update chunk_vectors set text_hash = ? where id = ?", (chunk_text_hash(other), ids[0]))
        problems = svc.check()
        assert problems == ["1 vectors were computed from another text than their chunk's "
                            "(run `desktop-memory reembed`)"]
    finally:
        svc.close()


def test_store_vectors_refuses_a_vector_for_another_text(tmp_path: Path) -> None:
    folder = tmp_path / "n"
    folder.mkdir()
    _write(folder, "a.md", "Alpha", "Auth", "one")
    svc = MemoryService(Settings(), db_path=tmp_path / "lib.db", embedder=HashEmbedder(16))
    try:
        svc.index_paths([folder], embed=False)
        with svc.writing() as store:
            store.ensure_model("hash-16", 16)
            pending = store.pending_chunks(10)
            vecs = HashEmbedder(16).embed_documents([t for _, t in pending])
            wrong = [t + " (edited)" for _, t in pending]
            assert store.store_vectors([c for c, _ in pending], vecs, texts=wrong) == 0
            assert store.store_vectors([c for c, _ in pending], vecs, texts=[t for _, t in pending]) == len(pending)
    finally:
        svc.close()


def test_migration_text_hash_hashes_existing_chunks_and_vectors(tmp_path: Path) -> None:
    """A schema-2 database (as the previous release wrote it) gets text hashes for every chunk and vector."""
    db = tmp_path / "v2.db"
    conn = apsw.Connection(str(db))
    with conn:
        conn.execute(MIGRATIONS[0])
        MIGRATIONS[1](conn)
        conn.execute("insert into documents(id, path, kind, status) values(1, '/x.md', 'markdown', 'indexed')")
        for cid, text in ((1, "first passage"), (2, "second passage")):
            conn.execute("insert into chunks(id, doc_id, ord, text, char_start, char_end, embedded) "
                         "values(?, 1, ?, ?, 0, 1, 1)", (cid, cid, text))
            conn.execute("insert into chunk_vectors(id, embedding) values(?, zeroblob(16))", (cid,))
            conn.execute("insert into chunk_vector_bits(id, bits) values(?, zeroblob(1))", (cid,))
        conn.execute("pragma user_version = 2")
    conn.close()
    store = Store(db)
    try:
        assert store.conn.execute("pragma user_version").fetchone()[0] == SCHEMA_VERSION
        rows = store.conn.execute("select c.text, c.text_hash, v.text_hash from chunks c "
                                  "join chunk_vectors v on v.id = c.id order by c.id").fetchall()
        assert [(h1, h2) for _, h1, h2 in rows] == [(chunk_text_hash(t), chunk_text_hash(t)) for t, _, _ in rows]
        # the real check (this hand-made v2 file has no FTS rows nor model: only the identity findings count here)
        problems = IntegrityChecks(store.conn, store.mode, store.vectors).check_integrity()
        assert not [p for p in problems if "another text" in p or "text hash" in p], problems
    finally:
        store.close()
    assert (tmp_path / "v2.db.bak-v2").exists()
