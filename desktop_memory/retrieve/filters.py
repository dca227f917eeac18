"""Outside text made valid before SQLite: the query and the number of results.

``clean_query`` and ``clean_top_k`` here, and ``clean_filters`` (store/filters.py, beside the SQL it feeds), are
the one place where what a person typed (a query, a ``--path``/``--glob`` argument, a filter restored from the
window's state) becomes something SQLite, JSON and the tokenizers accept: lone surrogates and NUL characters
replaced, numbers bounded, and anything that cannot be made sensible refused with a UserError that says what to
change.
"""

from __future__ import annotations

from ..config import MAX_TOP_K
from ..errors import UserError
from ..store.filters import MAX_GLOB_CHARS, clean_filters, clean_path_text, clean_text, short_value

__all__ = ["MAX_GLOB_CHARS", "MAX_QUERY_CHARS", "clean_filters", "clean_path_text", "clean_query", "clean_text",
           "clean_top_k"]

MAX_QUERY_CHARS = 2000  # longer input is cut (a pasted page is still a fine query; 10k chars is not useful)


def clean_query(query: str | None) -> str:
    """The query as every lane and the highlighter read it: valid text, trimmed, at most MAX_QUERY_CHARS."""
    return clean_text(query or "").strip()[:MAX_QUERY_CHARS]


def clean_top_k(top_k: int | None, default: int) -> int:
    """``top_k`` (or the default) within 1..MAX_TOP_K; a value outside is refused with a message, not clamped."""
    value = default if top_k is None else top_k
    if isinstance(value, bool) or not isinstance(value, int):
        raise UserError(f"The number of results must be a whole number, not {value!r}.")
    if not 1 <= value <= MAX_TOP_K:
        raise UserError(f"The number of results must be between 1 and {MAX_TOP_K} (got {short_value(value)}).")
    return value
