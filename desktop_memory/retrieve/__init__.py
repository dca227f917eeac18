"""Retrieval: lanes (FTS5 BM25, rank-bm25, dense vectors), weighted fusion (z-score or RRF), filters."""

from .search_state import SearchState
from .searcher import BACKEND_LANES, Searcher, SearchOutcome

__all__ = ["BACKEND_LANES", "SearchOutcome", "SearchState", "Searcher"]
