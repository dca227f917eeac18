"""The words around a result list, and its highlights (Qt-free).

What the list must be honest about: whether nothing matched strongly (``weak``: "No strong matches", weak
passages left out of the context), how much of the library has vectors (the very figures of the status bar),
and what the keyword lane really matched in each shown passage (``SearchOutcome.marked``: the window asks for the
results and their highlights in one service call, ``search_outcome(marks=True)``; retrieve/highlight.py).
"""

from __future__ import annotations

import re

from ..config import SEMANTIC_BACKENDS
from ..models import WEAK, SearchResult, Stats
from .formatting import counted


def results_header(results: list[SearchResult], weak: bool, backend: str, ms: float) -> str:
    """``10 results · hybrid · 42 ms``; a weak outcome says so first: "No strong matches · 10 weak results …"."""
    n = len(results)
    if weak and n:
        return f"No strong matches · {counted(n, 'weak result')} (left out of the context) · {backend} · {ms:.0f} ms"
    n_weak = sum(1 for r in results if r.strength == WEAK)
    tail = f" ({n_weak} weak, left out of the context)" if n_weak else ""
    return f"{counted(n, 'result')}{tail} · {backend} · {ms:.0f} ms"


def semantic_note(stats: Stats | None, job_running: bool, backend: str) -> str:
    """What the results header says about vectors, from the same Stats the status bar shows."""
    if stats is None or not stats.pending_vectors or backend not in SEMANTIC_BACKENDS or not stats.chunks:
        return ""
    # the very figures of the status bar's "semantic: x/y chunks embedded"
    if job_running:
        return (f"Semantic: {stats.vectors:,}/{stats.chunks:,} chunks embedded — semantic results join as "
                "vectors arrive.")
    return (f"Semantic: {stats.vectors:,}/{stats.chunks:,} chunks embedded; the rest are found by keyword only — "
            "Library → Embed missing vectors adds them.")


_LEAD = re.compile(r"^([^:.;]{3,60}): (?=[A-Z][a-z])")  # "rerank off, fused order kept: The reranker…"


def note_sentence(note: str) -> str:
    """A search note as one tidy sentence: capitalised, a full stop where a clause ends before a new sentence
    ("Rerank off, fused order kept. The reranker…", not "…kept: The reranker…"), and ending in punctuation."""
    text = " ".join(note.split())
    if not text:
        return ""
    text = _LEAD.sub(r"\1. ", text[:1].upper() + text[1:])
    return text if text[-1] in ".!?…)" else text + "."


def join_notes(notes: list[str], sep: str = " ") -> str:
    """Notes as sentences one after another (never "…try again.; 5 of these…")."""
    return sep.join(s for s in (note_sentence(n) for n in notes) if s)
