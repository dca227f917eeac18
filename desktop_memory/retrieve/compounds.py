"""A compound word written one way in the question and another in the notes: "wifi" for "Wi-Fi", "e-mail" for
"email", "setup" for "set-up".

The index tokenizer splits at a hyphen, so a note's "Wi-Fi" is the tokens ``wi fi`` and the question's "wifi" is
one token no passage holds: the keyword lane cannot find it, and match strength weighs it as the part of the
question nothing answers (wording.py). The other way round, the question's "e-mail" is the two words ``e`` and
``mail`` while the notes say ``email``. Both are settled by the index itself, with no word list:

- a question word **no passage holds** is tried as every two-part split ("wifi" -> "w ifi", "wi fi", "wif i")
  and replaced by the first split the index holds *as a phrase* (the two tokens side by side, as "Wi-Fi" is),
  its first part not a stopword (so "abook" is not "a book", while "setup" is "set up");
- a question's **hyphenated word**, or two of its words side by side ("wi fi", "post code"), whose joined form
  the index holds, and whose parts it does not hold side by side, is replaced by the joined form.

A word the index holds is never touched, so a library that writes it the question's way ranks as before; the
look-ups run only for a question of at most ``MAX_QUERY_WORDS`` words (a MATCH per word that stops at the first
row; the splits only for words the index does not hold, at most ``MAX_SPLIT_WORDS`` of at most ``MAX_SPLIT_LEN``
characters).
"""

from __future__ import annotations

import re
import threading

from ..store.protocol import LibraryStore
from .query_text import STOPWORDS, quote_fts, term_counts, tokenize

MAX_QUERY_WORDS = 8  # only a question of at most this many words is looked at (a long one has other words)
MAX_SPLIT_WORDS = 4  # unknown words tried as a split compound per query (a short question is the point)
MAX_SPLIT_LEN = 24  # longer unknown words are not tried (a letter string, a hash)
_HYPHENATED = re.compile(r"\w+(?:[-\u2010\u2011]\w+)+", re.UNICODE)


def _held(store: LibraryStore, phrase: str) -> bool:
    """Whether any passage holds ``phrase`` (its tokens side by side): one MATCH that stops at the first row."""
    n, _ = store.reads.window_doc_freq(quote_fts(phrase), -(2 ** 62), 2 ** 62, 1)
    return n > 0


_KEPT = 64  # recent answers remembered: one search asks three times (keyword lane, ceiling, wording)
_CACHE: dict[tuple[str, int, str], dict[str, int]] = {}
_LOCK = threading.Lock()


def compound_counts(store: LibraryStore, query: str) -> dict[str, int]:
    """``term_counts(query)`` with compounds written the index's way (see the module doc), in the same order; a
    term may be a two-word phrase ("wi fi"), which quote_fts sends as a phrase. Remembered per library, content
    version and query (the answer depends only on the index), so one search looks up once."""
    key = (str(store.path), store.content_version(), query)
    with _LOCK:
        hit = _CACHE.get(key)
    if hit is None:
        hit = _compound_counts(store, query)
        with _LOCK:
            if len(_CACHE) >= _KEPT:
                _CACHE.clear()
            _CACHE[key] = hit
    return dict(hit)


def forget(path: str) -> None:
    """Drop the answers remembered for this database file (``str(store.path)``): its service closed."""
    with _LOCK:
        for key in [k for k in _CACHE if k[0] == path]:
            del _CACHE[key]


def _compound_counts(store: LibraryStore, query: str) -> dict[str, int]:
    counts = term_counts(query)
    if not counts or len(counts) > MAX_QUERY_WORDS:
        return counts
    out = dict(counts)
    # the question's hyphenated words, and two words side by side, whose joined form the library uses
    groups = [re.split(r"[-\u2010\u2011]", m.group(0).lower()) for m in _HYPHENATED.finditer(query)]
    words = tokenize(query)
    groups += [[a, b] for a, b in zip(words, words[1:]) if a != b and a not in STOPWORDS and b not in STOPWORDS]
    for parts in groups:
        if not all(p in out or p in STOPWORDS for p in parts):
            continue
        joined = "".join(parts)
        if joined in out or _held(store, " ".join(parts)) or not _held(store, joined):
            continue
        first = next((p for p in parts if p in out), None)
        rebuilt: dict[str, int] = {}
        for term, n in out.items():
            if term == first:
                rebuilt[joined] = n
            elif term not in parts:
                rebuilt[term] = n
        out = rebuilt or out
    # the question's unknown words the library writes in two parts
    tried = 0
    for term in list(out):
        if tried >= MAX_SPLIT_WORDS:
            break
        if not term.isalpha() or not 3 <= len(term) <= MAX_SPLIT_LEN or " " in term:
            continue
        if _held(store, term):
            continue
        tried += 1
        splits = [(term[:i], term[i:]) for i in range(1, len(term))]
        split = next((f"{a} {b}" for a, b in splits
                      if a not in STOPWORDS and _held(store, f"{a} {b}")), None)
        if split is not None and split not in out:
            out = {(split if t == term else t): n for t, n in out.items()}
    return out
