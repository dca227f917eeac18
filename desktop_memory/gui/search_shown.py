"""What one search brings back to the window, and the words around it (Qt-free; the worker runs the search).

A search for display is the ranked results plus what the results list needs to be honest about them: the
lane notes, whether nothing matched strongly (``weak``: "No strong matches", weak passages left out of the
context), and the keyword lane's own matches in each shown passage (``marked``, for highlighting). The
highlight query is separate from the ranked search (retrieve/highlight.py) and runs on the same worker.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from ..models import SearchFilters, SearchResult, Stats
from .formatting import counted

log = logging.getLogger(__name__)


@dataclass
class SearchShown:
    results: list[SearchResult]
    notes: list[str] = field(default_factory=list)
    weak: bool = False  # no strong match at all
    marked: dict[int, str] | None = None  # {chunk id: text with matched tokens marked}; None = not available


def run_search_for_display(svc: Any, query: str, backend: str, top_k: int, filters: SearchFilters) -> SearchShown:
    """On a worker: search, then mark what the keyword lane matched in the results (when the service can)."""
    outcome_fn = getattr(svc, "search_outcome", None)
    if outcome_fn is not None:
        out = outcome_fn(query, backend=backend, top_k=top_k, filters=filters)
        shown = SearchShown(list(out.results), list(out.notes), bool(getattr(out, "weak", False)))
    else:
        results = svc.search(query, backend=backend, top_k=top_k, filters=filters)
        shown = SearchShown(list(results), list(getattr(svc, "last_search_notes", []) or []))
    # a service that calibrates only per result: weak when every result is weak
    if shown.results and all(r.strength == "weak" for r in shown.results):
        shown.weak = True
    highlights = getattr(svc, "highlights", None)
    if highlights is not None and shown.results and backend != "dense":
        try:
            shown.marked = highlights(query, [r.chunk_id for r in shown.results])
        except Exception:  # highlighting is a nicety: results without it beat no results
            log.warning("highlighting the results failed", exc_info=True)
    elif backend == "dense":
        shown.marked = {}  # semantic only: nothing was matched word for word
    return shown


def results_header(results: list[SearchResult], weak: bool, backend: str, ms: float) -> str:
    """``10 results · hybrid · 42 ms``; a weak outcome says so first: "No strong matches · 10 weak results …"."""
    n = len(results)
    if weak and n:
        return f"No strong matches · {counted(n, 'weak result')} (left out of the context) · {backend} · {ms:.0f} ms"
    n_weak = sum(1 for r in results if r.strength == "weak")
    tail = f" ({n_weak} weak, left out of the context)" if n_weak else ""
    return f"{counted(n, 'result')}{tail} · {backend} · {ms:.0f} ms"


def semantic_note(stats: Stats | None, job_running: bool, backend: str) -> str:
    """What the results header says about vectors, from the same Stats the status bar shows."""
    if stats is None or not stats.pending_vectors or backend not in ("hybrid", "dense") or not stats.chunks:
        return ""
    # the very figures of the status bar's "semantic: x/y chunks embedded"
    if job_running:
        return (f"Semantic: {stats.vectors:,}/{stats.chunks:,} chunks embedded — semantic results join as "
                "vectors arrive.")
    return (f"Semantic: {stats.vectors:,}/{stats.chunks:,} chunks embedded; the rest are found by keyword only — "
            "Library → Embed missing vectors adds them.")
