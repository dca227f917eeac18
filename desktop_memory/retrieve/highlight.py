"""What the keyword lane really matched in each shown passage, marked by FTS5's own ``highlight()``.

Why not a regex over the query words: the index is Porter-stemmed and drops stop words, so a prefix regex both
over-highlights ("do" lights up "don't", "the" everywhere) and under-highlights ("running" for "run" is fine,
but "ran" is not a prefix). Asking FTS5 to highlight the rows it matched, with the very expression the keyword
lane runs, marks exactly the tokens that counted.

The markers are two private-use characters (MARK_START / MARK_END) wrapped around each matched token, inside
the chunk's full text; the GUI turns them into styling after stripping markup. A separate small query over the
displayed chunk ids: it never slows the ranked search itself.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ..store.protocol import LibraryStore
from .compounds import compound_counts
from .query_text import or_match, weighted_terms

MARK_START = "\ue000"
MARK_END = "\ue001"
MAX_IDS = 500  # one query's bound parameters; more than a page of results is never shown at once


def marked_texts(store: LibraryStore, query: str, chunk_ids: Sequence[int]) -> dict[int, str]:
    """{chunk id: its text with MARK_START/MARK_END around every token the keyword query matched}.

    Chunks the query does not match are absent (a semantic-only hit has nothing to highlight). The query's words
    are read as the keyword lane reads them (compounds.py: "wifi" marks the note's "Wi-Fi")."""
    terms = weighted_terms(compound_counts(store, query or ""))
    ids = [int(c) for c in chunk_ids][:MAX_IDS]
    if not terms or not ids:
        return {}
    expr = or_match(terms)
    return {cid: text for cid, text in store.reads.highlighted(expr, ids, MARK_START, MARK_END).items()
            if MARK_START in text}



def result_marks(store: LibraryStore, query: str, backend: str, chunk_ids: Sequence[int]) -> dict[int, str] | None:
    """What the keyword lane matched in each shown result ({} for a semantic-only search); None when highlighting
    failed: results without highlights beat no results (the failure is logged)."""
    if backend == "dense":
        return {}
    try:
        return marked_texts(store, query, chunk_ids)
    except Exception:
        logging.getLogger(__name__).warning("highlighting the results failed", exc_info=True)
        return None


def spans(marked: str) -> tuple[str, list[tuple[int, int]]]:
    """(plain text, [(start, end), ...]) from a marked text: the matched ranges in the unmarked string."""
    out: list[str] = []
    found: list[tuple[int, int]] = []
    pos = 0
    start = -1
    for ch in marked:
        if ch == MARK_START:
            start = pos
        elif ch == MARK_END:
            if start >= 0:
                found.append((start, pos))
            start = -1
        else:
            out.append(ch)
            pos += 1
    return "".join(out), found
