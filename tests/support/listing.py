"""A library of a few thousand documents written straight through the store (no files, no model): nested folders,
failed and skipped files, a shared duplicate passage, half of the passages embedded. For the Library's listing,
in the store (tests/unit/store/test_doc_listing.py) and in the window (tests/gui/test_library_paging.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.models import ChunkDraft, Location
from desktop_memory.service import MemoryService

FOLDERS = ["/lib/a", "/lib/a/sub", "/lib/a/sub/deep", "/lib/b", "/other", "/x/y/z"]


def _drafts(doc: int, n: int) -> list[ChunkDraft]:
    texts = [f"document {doc} passage {i} about topic {doc % 7}" for i in range(n)]
    return [ChunkDraft(t, Location(char_start=i * 100, char_end=i * 100 + len(t))) for i, t in enumerate(texts)]


def build_library(db: Path, docs: int) -> MemoryService:
    """``docs`` documents spread over nested folders (one big folder), some failed or skipped, some sharing a
    duplicate passage, half of the passages embedded."""
    svc = MemoryService(Settings(db_path=str(db)), db_path=db, embedder=HashEmbedder(16))
    with svc.writing() as store:
        store.ensure_model("hash-test", 16)
        for i in range(docs):
            folder = FOLDERS[0] if i % 3 == 0 else FOLDERS[i % len(FOLDERS)]
            path = f"{folder}/{'Doc' if i % 5 == 0 else 'doc'}-{i:05d}.txt"
            n = 1 + i % 4
            keys = [f"{i}:{j}" for j in range(n)]
            if i % 11 == 0 and i:
                keys[0] = "shared"  # a duplicate passage: collapsed onto the first document that had it
            store.write_document(path=path, kind="text", language=None, title=None, size=100 + (i * 37) % 1000,
                                 mtime=1000.0 + i % 13, content_hash=str(i), chunks=_drafts(i, n), dedupe_keys=keys)
        for i in range(0, docs, 17):
            status = "failed" if i % 2 else "skipped"
            store.record_outcome(path=f"/lib/b/problem-{i:05d}.pdf", status=status, error=f"reason {i}")
        pending = store.pending_chunks(100000)
        half = pending[: len(pending) // 2]
        vecs = np.random.default_rng(0).normal(size=(len(half), 16)).astype(np.float32)
        store.store_vectors([cid for cid, _ in half], vecs / np.linalg.norm(vecs, axis=1, keepdims=True))
    return svc
