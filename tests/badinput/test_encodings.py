"""Text that is not UTF-8: the charset is detected (charset-normalizer) only where UTF-8 fails, and the guess is
recorded with the document."""

from __future__ import annotations

from pathlib import Path

import apsw

from desktop_memory.config import IngestSettings, Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.ingest.encoding import decode_bytes, guess_note
from desktop_memory.ingest.readers import read_document
from desktop_memory.service import MemoryService

CHINESE = (
    "本地 记忆 应用 可以 搜索 你 电脑 里 的 文件\n"
    "数据库 保存 每个 文档 的 文本 和 向量\n"
    "今天 天气 很好 我们 去 公园 散步 然后 回家 写 笔记\n"
)
FRENCH = "Crème brûlée et café au lait, très naïve. « Déjà vu » à l'hôtel.\n"


def test_gbk_chinese_file_is_decoded_found_and_flagged(tmp_path: Path) -> None:
    path = tmp_path / "笔记.txt"
    path.write_bytes((CHINESE * 4).encode("gbk"))
    doc = read_document(str(path), IngestSettings())
    assert doc.text == CHINESE * 4
    assert doc.warnings and "decoded as gb18030" in doc.warnings[0] and "a guess" in doc.warnings[0]
    svc = MemoryService(Settings(), db_path=tmp_path / "lib.db", embedder=HashEmbedder(32))
    try:
        summary = svc.index_paths([path])
        assert summary.indexed == 1
        [hit, *_] = svc.search_outcome("数据库", backend="keyword").results
        assert hit.source.endswith("笔记.txt") and "数据库 保存 每个 文档" in hit.text
        [info] = svc.documents()
        assert "gb18030" in info.error  # the Library / `list` shows the guess
    finally:
        svc.close()
    conn = apsw.Connection(str(tmp_path / "lib.db"))
    stored = "".join(r[0] for r in conn.execute("select text from chunks order by ord"))
    conn.close()
    assert "今天 天气 很好" in stored and "\ufffd" not in stored


def test_western_legacy_text_stays_cp1252_with_a_note() -> None:
    text, enc = decode_bytes((FRENCH * 10).encode("cp1252"))
    assert (text, enc) == (FRENCH * 10, "cp1252")
    assert guess_note(enc) is not None


def test_cyrillic_cp1251_is_detected() -> None:
    body = "Сегодня хорошая погода, и мы идём гулять в парк. Потом пишем заметки о прочитанных книгах.\n" * 5
    assert decode_bytes(body.encode("cp1251")) == (body, "cp1251")


def test_utf8_is_never_sent_to_detection() -> None:
    assert decode_bytes(CHINESE.encode("utf-8")) == (CHINESE, "utf-8")
    assert guess_note("utf-8") is None and guess_note("utf-8-sig") is None
