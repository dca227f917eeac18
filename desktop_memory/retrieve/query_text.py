"""Turn free user text into safe lane inputs. No user text ever reaches FTS5 MATCH unquoted."""

from __future__ import annotations

import re

MAX_TERMS = 48
_WORD = re.compile(r"\w+", re.UNICODE)

# A compact English stop list: dropping these keeps OR queries over common terms fast and BM25 focused.
STOPWORDS = frozenset(
    ["a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves"]
)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens (unicode letters/digits/underscore runs)."""
    return [t.lower() for t in _WORD.findall(text)]


def query_terms(text: str) -> list[str]:
    """Distinct content terms of a query, in order; stopwords dropped unless the query is only stopwords."""
    words = tokenize(text)
    content = [w for w in words if w not in STOPWORDS] or words
    seen: dict[str, None] = {}
    for w in content:
        if len(seen) >= MAX_TERMS:
            break
        seen.setdefault(w, None)
    return list(seen)


def quote_fts(term: str) -> str:
    """An FTS5 string literal: any character is just text inside double quotes ("" escapes a quote)."""
    return '"' + term.replace('"', '""') + '"'


def fts_match_expression(text: str) -> str | None:
    """An OR query of quoted terms, or None when the text has no searchable words (e.g. only emoji/punctuation)."""
    terms = query_terms(text)
    if not terms:
        return None
    return " OR ".join(quote_fts(t) for t in terms)
