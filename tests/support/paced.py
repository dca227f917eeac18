"""An embedder that takes real time per slice (the hashing embedder plus a pause per call), so "within one slice"
and "the embedding is still running" are true on any machine; and a folder of Markdown notes to embed."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from desktop_memory.embed.hashing import HashEmbedder
from tests.support.waiting import wait_for  # noqa: F401  (the suite imports it from here)

SLICE_S = 0.15  # one embedding slice (16 passages) takes this long: 100 files of 8 passages ≈ 7.5 s of embedding


class PacedEmbedder(HashEmbedder):
    """The hashing embedder, ``pause`` seconds per call: a slice takes as long as a real model's on a slow PC."""

    def __init__(self, pause: float = SLICE_S) -> None:
        super().__init__(64)
        self.pause = pause
        self.slices = 0
        self.lock = threading.Lock()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        time.sleep(self.pause)
        with self.lock:
            self.slices += 1
        return super().embed_documents(texts)


def write_folder(root: Path, files: int = 100, paragraphs: int = 8, word: str = "lorem") -> Path:
    """``files`` Markdown files of ``paragraphs`` sections each: one passage per section."""
    root.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        body = "\n\n".join(f"## Part {j}\n\n{word} {i} {j} " + " ".join(f"w{(i * 7 + j * 13 + k) % 97}"
                                                                          for k in range(60))
                           for j in range(paragraphs))
        (root / f"note{i:03}.md").write_text(f"# Note {i}\n\n{body}\n", encoding="utf-8")
    return root
