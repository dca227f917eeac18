"""Search filters as SQL, and outside text made valid before SQLite sees it.

``clean_text``, ``clean_path_text`` and ``clean_filters`` make what a person typed (a ``--path``/``--glob``
argument, a filter restored from the window's state) something SQLite and the tokenizers accept: lone surrogates
(Python's stand-in for bytes that are not valid in the locale's encoding) and NUL characters replaced, and anything
that cannot be made sensible refused with a UserError that says what to change. ``filter_sql`` applies
``clean_filters`` itself, so every lane gets clean parameters. ``allowed_sql`` / ``allowed_canonical_sql`` extend
a filter to collapsed copies: a canonical chunk passes when its own file *or any copy's file* passes
(retrieve/copies.py explains why).
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any

from ..errors import UserError
from ..models import DOC_KINDS, SearchFilters
from ..paths import prefix_range

MAX_GLOB_CHARS = 1000  # SQLite refuses GLOB patterns over 50,000 bytes with "pattern too complex"
_SURROGATES = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """Text SQLite can store and compare: NULs dropped, lone surrogates replaced by U+FFFD (one for one)."""
    if "\x00" in text:
        text = text.replace("\x00", "")
    return _SURROGATES.sub("\ufffd", text) if _SURROGATES.search(text) else text


def clean_path_text(path: str) -> str:
    """A path or glob typed by a person, in the form stored paths take: bytes that were not valid text are written
    as ``\\xNN`` (as the index stores names it could not decode), so ``--path $'/tmp/\\xff'`` finds those entries."""
    if not _SURROGATES.search(path):
        return clean_text(path)
    try:
        escaped = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate outside the surrogateescape range (not from argv or a file name)
        escaped = path
    return clean_text(escaped)


def clean_filters(filters: SearchFilters | None) -> SearchFilters | None:
    """Filters whose text SQLite accepts and whose dates are real numbers; UserError when one cannot be used."""
    if filters is None:
        return None
    changes: dict[str, Any] = {}
    if filters.path_prefix:
        changes["path_prefix"] = clean_path_text(str(filters.path_prefix))
    if filters.path_glob:
        glob = clean_path_text(str(filters.path_glob))
        if len(glob) > MAX_GLOB_CHARS:
            raise UserError(f"The path pattern is too long ({len(glob):,} characters; at most {MAX_GLOB_CHARS:,}).")
        changes["path_glob"] = glob
    if filters.kinds:
        changes["kinds"] = tuple(clean_text(str(k)) for k in filters.kinds)
    if filters.exclude_paths:
        changes["exclude_paths"] = tuple(clean_text(str(p)) for p in filters.exclude_paths)
    for name in ("modified_since", "modified_until"):
        value = getattr(filters, name)
        if value is None:
            continue
        try:
            seconds = float(value)
        except (TypeError, ValueError, OverflowError):
            raise UserError(f"The date filter {short_value(value)} is not a date.") from None
        if not math.isfinite(seconds):
            raise UserError(f"The date filter {short_value(value)} is not a date.")
        changes[name] = seconds
    return dataclasses.replace(filters, **changes) if changes else filters


def short_value(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}…({len(text)} characters)"


def filter_sql(filters: SearchFilters | None, doc_alias: str = "d") -> tuple[str, list[object]]:
    """A WHERE fragment over the documents table (alias ``d``) and its parameters; ("", []) when unfiltered."""
    filters = clean_filters(filters)
    if filters is None or filters.is_empty():
        return "", []
    clauses: list[str] = []
    params: list[object] = []
    if filters.path_prefix:  # a folder (or a file): it, or anything below it, never a sibling sharing its name
        sql, args = _inside_sql(doc_alias, filters.path_prefix)
        clauses.append(sql)
        params += args
    if filters.path_glob:
        clauses.append(f"{doc_alias}.path GLOB ?")
        params.append(filters.path_glob)
    kinds = [k for k in filters.kinds if k in DOC_KINDS]
    if filters.kinds:
        if not kinds:
            clauses.append("0")
        else:
            clauses.append(f"{doc_alias}.kind IN ({','.join('?' * len(kinds))})")
            params += kinds
    if filters.modified_since is not None:
        clauses.append(f"{doc_alias}.mtime >= ?")
        params.append(float(filters.modified_since))
    if filters.modified_until is not None:
        clauses.append(f"{doc_alias}.mtime <= ?")
        params.append(float(filters.modified_until))
    for path in filters.exclude_paths:  # the path itself, or anything below it
        sql, args = _inside_sql(doc_alias, path)
        clauses.append(f"not {sql}")
        params += args
    return " AND ".join(clauses), params


def _inside_sql(doc_alias: str, folder: str) -> tuple[str, list[object]]:
    """``paths.is_inside(path, folder)`` as SQL: the folder's own names, or the index range below it."""
    lo, hi = prefix_range(folder)
    return (f"({doc_alias}.path in (?, ?) or ({doc_alias}.path >= ? and {doc_alias}.path < ?))",
            [folder, lo[:-1], lo, hi])


def allowed_sql(filters: SearchFilters | None, chunk_alias: str = "c",
                doc_alias: str = "d") -> tuple[str, list[object]]:
    """A WHERE fragment true for a canonical chunk (alias ``chunk_alias``, its document ``doc_alias``) whose file
    or any copy's file passes ``filters``; ("", []) when unfiltered."""
    where, params = filter_sql(filters, doc_alias)
    if not where:
        return "", []
    copy_where, copy_params = filter_sql(filters, "dx")
    sql = (f"(({where}) or exists (select 1 from chunks x join documents dx on dx.id = x.doc_id "
           f"where x.dup_of = {chunk_alias}.id and {copy_where}))")
    return sql, [*params, *copy_params]


def allowed_canonical_sql(filters: SearchFilters | None) -> tuple[str, list[object]]:
    """A SELECT of canonical chunk ids allowed by ``filters`` (own file or a copy's file passes); ("", []) when
    unfiltered. Duplicates may repeat an id."""
    where, params = filter_sql(filters)
    if not where:
        return "", []
    return ("select coalesce(c.dup_of, c.id) as id from chunks c join documents d on d.id = c.doc_id where " + where,
            params)
