"""Bytes → text with BOM handling and a fallback that never fails.

Newlines are normalised to "\\n" here, once, so that every line number we store is counted in the same text the
chunker sees (a CRLF file would otherwise give different offsets in different layers).
"""

from __future__ import annotations

import codecs
import re
import unicodedata

_BOMS: tuple[tuple[bytes, str], ...] = (
    # UTF-32 BOMs first: the UTF-32-LE BOM starts with the UTF-16-LE one.
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def bom_encoding(data: bytes) -> tuple[str, int] | None:
    """(encoding, BOM length) when ``data`` starts with a Unicode byte-order mark."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name, len(bom)
    return None


def guess_utf16_without_bom(data: bytes) -> str | None:
    """'utf-16-le'/'utf-16-be' when NULs sit in every other byte, as in BOM-less UTF-16 of mostly-ASCII text."""
    sample = data[:8192]
    if len(sample) < 4:
        return None
    even, odd = sample[0::2], sample[1::2]
    # ASCII text in UTF-16-LE has NUL in the odd bytes; binaries have NULs scattered in both.
    if odd.count(0) >= 0.7 * len(odd) and even.count(0) <= 0.05 * len(even):
        guess = "utf-16-le"
    elif even.count(0) >= 0.7 * len(even) and odd.count(0) <= 0.05 * len(odd):
        guess = "utf-16-be"
    else:
        return None
    decoded = sample[: len(sample) // 2 * 2].decode(guess, errors="replace")
    bad = sum(1 for ch in decoded if (ord(ch) < 32 and ch not in "\t\n\r\f") or ch == "\ufffd")
    return guess if bad <= len(decoded) // 50 else None  # the NUL pattern alone also fits some binaries


def normalise_newlines(text: str) -> str:
    """CRLF and lone CR become LF; everything else (tabs, form feeds) is left alone."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def decode_bytes(data: bytes) -> tuple[str, str]:
    """Decode file content: BOM → UTF-8 → BOM-less UTF-16 → detected charset → cp1252 → latin-1 (never fails).

    Returns ``(text, encoding)``; the text has "\\n" newlines and no NUL characters. ``guess_note(encoding)`` says
    when the encoding is a guess (anything but a BOM or valid UTF-8), for the document's warnings.
    """
    found = bom_encoding(data)
    if found:
        name, skip = found
        body = data[skip:]
        text = body.decode(name.replace("-sig", ""), errors="replace")
        encoding = name
    else:
        text, encoding = _decode_plain(data)
    return normalise_newlines(text).replace("\x00", ""), encoding


CERTAIN = frozenset({"utf-8", "utf-8-sig", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"})
MIN_COHERENCE = 0.05  # charset-normalizer recognised a language in the decoded text (not just "no errors")
MAX_CHAOS = 0.1
WESTERN_MESS = 0.2  # French/German prose in cp1252 measures ~0.0-0.1; GBK read as cp1252 ~2.6


def guess_note(encoding: str) -> str | None:
    """The warning recorded with a document whose encoding was guessed, or None when it was certain."""
    if encoding in CERTAIN:
        return None
    return f"not UTF-8: decoded as {encoding} (a guess; save the file as UTF-8 if the text looks wrong)"


def _decode_plain(data: bytes) -> tuple[str, str]:
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    utf16 = guess_utf16_without_bom(data)
    if utf16:
        return data.decode(utf16, errors="replace"), utf16 + " (no BOM)"
    try:
        western: str | None = data.decode("cp1252")
    except UnicodeDecodeError:
        western = None
    detected = _detect(data, western)
    if detected is not None:
        return detected
    if western is not None:
        return western, "cp1252"
    # cp1252 leaves five bytes undefined; latin-1 maps every byte, so this cannot fail.
    return data.decode("latin-1"), "latin-1"


def _detect(data: bytes, western: str | None) -> tuple[str, str] | None:
    """charset-normalizer's best reading when it is confident, else None (the cp1252/latin-1 fallback applies).

    Western text decodes to the same letters in several code pages (cp1250, cp1252, cp1257, ...) and the detector
    picks among them almost at random; so when the cp1252 reading already looks like clean text (its mess ratio,
    measured by the same library, is low) it is kept and nothing is detected. GBK, Shift-JIS or Cyrillic bytes
    read as cp1252 are a soup of accented capitals and symbols, with a high mess ratio."""
    from charset_normalizer import from_bytes  # imported only for the rare file that is not UTF-8
    from charset_normalizer.md import mess_ratio

    sample = data[:262_144]
    if western is not None and mess_ratio(western[:20_000], maximum_threshold=1.0) <= WESTERN_MESS:
        return None
    matches = list(from_bytes(sample))
    if not matches:
        return None
    best = min(m.chaos for m in matches)
    if best > MAX_CHAOS:
        return None
    # the readings as clean as the best one, most coherent first (the detector's own order among equals)
    tied = sorted((m for m in matches if m.chaos <= best + 0.01), key=lambda m: -m.coherence)
    for m in tied:
        try:
            text = data.decode(m.encoding, errors="replace")
        except LookupError:
            continue
        if m.coherence >= MIN_COHERENCE:
            return text, m.encoding
        # A short text gives the detector too few words to recognise a language (coherence 0 for a 46-byte GBK
        # note): then a reading is taken when it is written in one script, as real text is. A wrong reading of
        # CJK bytes mixes Hangul with Han, or Han with half-width kana; the cp1252 reading was found messy above.
        if one_script(text):
            return text, m.encoding
    return None


MIN_SCRIPT_SHARE = 0.9  # of the non-ASCII letters, in one script group
MIN_SCRIPT_LETTERS = 4
MIN_DISTINCT = 8  # different letters (fewer when the text is shorter): real text is not three letters repeated
_SCRIPT_GROUPS = {"CJK": "han", "HIRAGANA": "han", "KATAKANA": "han", "HANGUL": "hangul", "CYRILLIC": "cyrillic",
                  "GREEK": "greek", "ARABIC": "arabic", "HEBREW": "hebrew", "THAI": "thai", "LATIN": "latin"}


def one_script(text: str) -> bool:
    """True when nearly all non-ASCII letters of ``text`` belong to one script (Han with kana counts as one), other
    than Latin (a Latin reading is what the cp1252 check already judged), and they are not a few repeated."""
    counts: dict[str, int] = {}
    distinct: set[str] = set()
    for ch in text:
        if ch.isascii() or not unicodedata.category(ch).startswith("L"):
            continue
        distinct.add(ch)
        group = _SCRIPT_GROUPS.get(unicodedata.name(ch, "?").split(" ", 1)[0], "other")
        counts[group] = counts.get(group, 0) + 1
    total = sum(counts.values())
    if total < MIN_SCRIPT_LETTERS or len(distinct) < min(MIN_DISTINCT, total // 4):
        return False  # too little to tell, or a few byte pairs repeated (binary noise), not words
    group, most = max(counts.items(), key=lambda kv: kv[1])
    return group not in ("latin", "other") and most >= MIN_SCRIPT_SHARE * total


_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """``text`` with every surrogate code point replaced by U+FFFD, one for one (offsets do not move).

    Python smuggles undecodable bytes into ``str`` as lone surrogates (a CLI argument typed in a non-UTF-8
    terminal, a file name, a PDF font with a broken ToUnicode map); SQLite, JSON and the tokenizers cannot
    encode them and would raise."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text
