"""How short legacy-encoded texts decode: a handful of real short sentences per encoding, each encoded in it and
decoded by ``ingest.encoding.decode_bytes`` as a file's bytes would be. Prints one row per encoding (right / total)
and the samples it got wrong. Used to tune the short-text rule in ``ingest/encoding.py`` (issue 21 §7).

    python -m desktop_memory_bench.short_encodings
"""

from __future__ import annotations

import sys

from desktop_memory.ingest.encoding import decode_bytes

SAMPLES: dict[str, list[str]] = {
    "gbk": ["数据库 测试 文档。这是一个关于 数据库 的说明。", "今天天气很好，我们去公园散步吧。",
            "请把会议记录发给我，谢谢。", "项目计划：第一阶段完成需求分析。", "北京的秋天很美。"],
    "big5": ["資料庫 測試 文件。這是一個關於資料庫的說明。", "明天下午三點開會，請準時出席。",
             "請把會議記錄寄給我，謝謝。", "台北的冬天很冷。"],
    "shift_jis": ["データベースの説明書です。よろしくお願いします。", "明日の会議は午後三時からです。",
                  "東京の天気は晴れです。", "この文書は検索のテストです。"],
    "euc_kr": ["데이터베이스 테스트 문서입니다. 감사합니다.", "내일 오후 세 시에 회의가 있습니다.",
               "서울의 가을은 아름답습니다.", "회의록을 보내 주세요."],
    "cp1251": ["Привет, это короткая заметка о базе данных.", "Встреча завтра в три часа дня.",
               "Москва — столица России.", "Пожалуйста, пришлите отчёт."],
    "cp1252": ["Café crème, déjà vu — naïve façade à Noël.", "Größe über Straße, schön müde.",
               "Le cœur a ses raisons que la raison ne connaît point.", "Señor Muñoz pidió un café.",
               "Ça coûte 5 € à l'hôtel.", "Über die Brücke."],
}


def measure() -> dict[str, tuple[int, int, list[str]]]:
    """{encoding: (right, total, wrong samples as decoded)}."""
    out = {}
    for enc, texts in SAMPLES.items():
        wrong = []
        for text in texts:
            got, _ = decode_bytes(text.encode(enc))
            if got != text:
                wrong.append(got)
        out[enc] = (len(texts) - len(wrong), len(texts), wrong)
    return out


def main() -> int:
    results = measure()
    print(f"{'encoding':<10} {'right':>5} {'of':>3}  bytes")
    for enc, (right, total, _) in results.items():
        sizes = sorted(len(t.encode(enc)) for t in SAMPLES[enc])
        print(f"{enc:<10} {right:>5} {total:>3}  {sizes[0]}-{sizes[-1]}")
    for enc, (_, _, wrong) in results.items():
        for w in wrong:
            print(f"  wrong ({enc}): {w!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
