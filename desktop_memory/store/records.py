"""Plain records the Store hands out: a document's row, and what writing one document did."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class DocRow:
    id: int
    path: str
    kind: str
    size: int
    mtime: float
    content_hash: str
    status: str
    error: str
    n_chunks: int


@dataclass
class WriteResult:
    doc_id: int
    chunks: int
    duplicates: int
    vectors_reused: int = 0  # chunks of a re-indexed document whose unchanged text kept its old vector
