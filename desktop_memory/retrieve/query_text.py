"""Turn free user text into safe lane inputs. No user text ever reaches FTS5 MATCH unquoted.

Repeated words weigh more in a long query: in a pasted paragraph ("find what's related to this") a word said three
times is three OR'ed phrases, and FTS5's bm25() sums over phrases, so its weight grows with its query term
frequency, as in Lucene/bm25s. In a shorter query (fewer than ``LONG_QUERY_TERMS`` distinct content words, about
two sentences) a repeat is a restated topic word and every word counts once: counting repeats in every query cost
0.6 nDCG@10 points on SciFact train (0.7023 → 0.6965) and 0.1 on Cranfield, and from 16 words on it still cost
0.003 on SciFact test (docs/BENCHMARKS.md, "Retrieval, second pass"). No benchmark query reaches 32 words. Up to
``MAX_TERMS`` distinct words are kept (the searcher already cuts a query at 2,000 characters, ~300 words); the
keyword lane's postings budget (keyword.py) bounds the cost on big libraries.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MAX_TERMS = 256  # distinct terms (at 48, 17 % of one collection's queries lose terms)
LONG_QUERY_TERMS = 32  # from this many distinct content words on (a paragraph), repeats weigh more
MAX_REPEAT = 4  # a word's weight grows with its count up to this many (each repeat is one more phrase to score)
_WORD = re.compile(r"\w+", re.UNICODE)

# A compact English stop list: dropping these keeps OR queries over common terms fast and BM25 focused.
STOPWORDS = frozenset(
    [
        "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at",
        "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could",
        "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has",
        "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if",
        "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor",
        "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out",
        "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs",
        "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too",
        "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who",
        "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves"
    ]
)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens (unicode letters/digits/underscore runs)."""
    return [t.lower() for t in _WORD.findall(text)]


def term_counts(text: str) -> dict[str, int]:
    """Content terms of a query with how often each occurs (at most MAX_REPEAT), in first-seen order; stopwords
    dropped unless the query is only stopwords; at most MAX_TERMS distinct terms."""
    words = tokenize(text)
    content = [w for w in words if w not in STOPWORDS] or words
    counts: dict[str, int] = {}
    for w in content:
        if w in counts:
            counts[w] = min(MAX_REPEAT, counts[w] + 1)
        elif len(counts) < MAX_TERMS:
            counts[w] = 1
    return counts


def query_terms(text: str) -> list[str]:
    """Distinct content terms of a query, in order (see ``term_counts``)."""
    return list(term_counts(text))


def weighted_terms(counts: dict[str, int], keep: list[str] | None = None) -> list[str]:
    """The lane's query phrases: in a long query each term repeated by its count, in a short one each term once
    (only those in ``keep`` when given), in first-seen order."""
    allowed = set(keep) if keep is not None else None
    long_query = len(counts) >= LONG_QUERY_TERMS
    return [t for t, n in counts.items() if allowed is None or t in allowed for _ in range(n if long_query else 1)]


def quote_fts(term: str) -> str:
    """An FTS5 string literal: any character is just text inside double quotes ("" escapes a quote)."""
    return '"' + term.replace('"', '""') + '"'


def or_match(terms: Iterable[str]) -> str:
    """The FTS5 MATCH expression the lanes send: each term a quoted literal, joined by OR ("" for no terms), so
    FTS5 parses it whatever the person typed."""
    return " OR ".join(quote_fts(t) for t in terms)
