"""Issue 21 §7: a short GBK note is decoded as GBK and its words are found; short Western cp1252 stays cp1252.

The samples (desktop_memory_bench/short_encodings.py) are real short sentences, 16-53 bytes, in GBK, Big5,
Shift-JIS, EUC-KR, cp1251 and cp1252; before the short-text rule only 7 of 27 decoded right (all six cp1252).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_memory.config import EmbedderSettings, Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.ingest.encoding import decode_bytes
from desktop_memory.service import MemoryService
from desktop_memory_bench.short_encodings import SAMPLES

GBK_NOTE = "数据库 测试 文档。这是一个关于 数据库 的说明。"


def test_the_46_byte_gbk_note_is_indexed_as_chinese_and_found(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    data = GBK_NOTE.encode("gbk")
    assert len(data) == 46
    (folder / "note.txt").write_bytes(data)
    svc = MemoryService(Settings(db_path=str(tmp_path / "m.db"), embedder=EmbedderSettings(kind="hash")),
                        embedder=HashEmbedder(64))
    try:
        svc.index_paths([folder])
        hits = svc.search_outcome("数据库", backend="keyword").results
        assert [r.source for r in hits] == [str(folder / "note.txt")]
        assert "数据库" in hits[0].text
        (doc,) = svc.documents()
        assert "decoded as gb18030" in doc.error, "the guess is still flagged as a guess"
    finally:
        svc.close()


@pytest.mark.parametrize("encoding", list(SAMPLES))
def test_short_samples_decode_right(encoding: str) -> None:
    for text in SAMPLES[encoding]:
        got, used = decode_bytes(text.encode(encoding))
        assert got == text, (encoding, used, got)


def test_repeated_noise_is_not_taken_for_hangul() -> None:
    noise = bytes([0x81, 0x8D, 0x8F, 0x90, 0x9D, 0x41]) * 200
    assert decode_bytes(noise)[1] == "latin-1"
