"""What the "no setting breaks search" tests search: two small notes, and an embedder whose query embedding fails
with an error that is not an EmbedderError (as a header with a non-ASCII key once did)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from desktop_memory.embed.hashing import HashEmbedder

WORDS = "The tyre pressure of the car is 2.3 bar in front and 2.5 bar at the back."


def tyre_notes(tmp_path: Path) -> Path:
    """``tmp_path/notes``: a note on tyre pressure (the answer) and one on bread (the word "pressure" only)."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "car.txt").write_text(WORDS, encoding="utf-8")
    (folder / "bread.txt").write_text("Sourdough bread bakes for forty minutes at 230 degrees, with steam for "
                                      "pressure.", encoding="utf-8")
    return folder


class NotEmbedderErrorEmbedder(HashEmbedder):
    """An embedder failing the way a header with a non-ASCII key failed: not with an EmbedderError."""

    def embed_query(self, text: str) -> Any:
        raise UnicodeEncodeError("ascii", "sk-\u200b", 3, 4, "ordinal not in range(128)")
