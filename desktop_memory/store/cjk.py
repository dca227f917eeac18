"""Keyword search for scripts written without spaces (Chinese, Japanese, Korean, Thai, Lao, Khmer, Myanmar).

FTS5's unicode61 tokenizer makes a whole run of such text one token, so a word inside a sentence cannot be found.
Every canonical chunk that holds such text also gets a row in ``chunks_cjk``: its runs cut into overlapping
character *bigrams* ("東京都に" → "東京 京都 都に"), a run of one character kept as it is. A query's runs are cut the
same way and OR'ed, so BM25 ranks chunks by how many of the query's bigrams they hold (and how rarely those occur).
Bigrams rather than trigrams: most Japanese and Chinese words are two characters long (東京, 温泉), which a
trigram index cannot match. Chunks without such text get no row: an English library pays nothing.
"""

from __future__ import annotations

import re
import unicodedata

# Hiragana, Katakana (+ phonetic extensions, half-width), CJK ideographs (+ ext. A, compatibility, ext. B-F),
# Hangul syllables and jamo, Thai, Lao, Khmer, Myanmar, Bopomofo.
_RUN = re.compile(
    "[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
    "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af\u0e00-\u0e7f\u0e80-\u0eff\u1780-\u17ff\u1000-\u109f\u3100-\u312f"
    "\u3005\u3006\u30fc]+"
)
# unicode61 must keep combining marks (Thai vowels and tone marks are category Mn) inside a bigram token
TOKENIZER = "unicode61 remove_diacritics 0 categories 'L* N* Co M*'"
CREATE_TABLE = f"CREATE VIRTUAL TABLE chunks_cjk USING fts5(grams, tokenize=\"{TOKENIZER}\")"


def runs(text: str) -> list[str]:
    """The runs of no-space script in ``text`` (NFKC-normalised: half-width katakana become full-width)."""
    return _RUN.findall(unicodedata.normalize("NFKC", text))


def bigrams(run: str) -> list[str]:
    """Overlapping character bigrams of one run; a one-character run is its own gram."""
    if len(run) < 2:
        return [run] if run else []
    return [run[i : i + 2] for i in range(len(run) - 1)]


def grams_text(text: str) -> str:
    """What ``chunks_cjk`` indexes for a chunk: every run's bigrams, space-separated ("" when there are none).
    Text below U+0E00 (Latin, Greek, Cyrillic, Arabic…) has no run either, NFKC-normalised or not (nothing there
    normalises into a run's script): answered without normalising, the write path's common case."""
    if text.isascii() or max(text, default=" ") < "\u0e00":
        return ""
    return " ".join(g for run in runs(text) for g in bigrams(run))


def query_grams(text: str, limit: int = 256) -> list[str]:
    """A query's distinct bigrams in order (at most ``limit``)."""
    out: dict[str, None] = {}
    for run in runs(text):
        for g in bigrams(run):
            if len(out) >= limit:
                return list(out)
            out.setdefault(g, None)
    return list(out)
