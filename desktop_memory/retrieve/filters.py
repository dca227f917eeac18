"""SQL for search filters, applied inside each lane so filtered searches still return top-k."""

from __future__ import annotations

from ..models import DOC_KINDS, SearchFilters


def filter_sql(filters: SearchFilters | None, doc_alias: str = "d") -> tuple[str, list]:
    """A WHERE fragment over the documents table (alias ``d``) and its parameters; ("", []) when unfiltered."""
    if filters is None or filters.is_empty():
        return "", []
    clauses: list[str] = []
    params: list = []
    if filters.path_prefix:
        prefix = filters.path_prefix
        clauses.append(f"substr({doc_alias}.path, 1, ?) = ?")
        params += [len(prefix), prefix]
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
    return " AND ".join(clauses), params
