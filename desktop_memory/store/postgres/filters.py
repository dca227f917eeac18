"""Search filters as PostgreSQL SQL: the same rules as store/filters.py (a path prefix, a glob, kinds, dates,
paths left out; a canonical chunk passes when its own file or a copy's file passes), with ``%s`` parameters."""

from __future__ import annotations

from ...models import DOC_KINDS, SearchFilters
from ...paths import below
from ..filters import clean_filters


def glob_regex(glob: str) -> str:
    """SQLite's GLOB (``*``, ``?``, ``[...]``, ``[^...]``; case-sensitive, whole string) as a POSIX regex."""
    out = ["^"]
    i = 0
    while i < len(glob):
        ch = glob[i]
        if ch == "*":
            out.append(".*")
        elif ch == "?":
            out.append(".")
        elif ch == "[" and "]" in glob[i + 2:]:
            end = glob.index("]", i + 2)
            body = glob[i + 1:end]
            neg = body.startswith("^")
            body = body[1:] if neg else body
            body = body.replace("\\", "\\\\")
            out.append("[" + ("^" if neg else "") + body + "]")
            i = end
        else:
            out.append("\\" + ch if not ch.isalnum() else ch)
        i += 1
    return "".join(out) + "$"


def filter_sql(filters: SearchFilters | None, doc: str = "d") -> tuple[str, list[object]]:
    """A WHERE fragment over documents (alias ``doc``) and its parameters; ("", []) when unfiltered."""
    filters = clean_filters(filters)
    if filters is None or filters.is_empty():
        return "", []
    clauses: list[str] = []
    params: list[object] = []
    if filters.path_prefix:  # a folder (or a file): it, or anything below it, never a sibling sharing its name
        folder = filters.path_prefix
        inner = below(folder)
        clauses.append(f"({doc}.path = %s or {doc}.path = %s or left({doc}.path, %s) = %s)")
        params += [folder, inner[:-1], len(inner), inner]
    if filters.path_glob:
        clauses.append(f"{doc}.path ~ %s")
        params.append(glob_regex(filters.path_glob))
    if filters.kinds:
        kinds = [k for k in filters.kinds if k in DOC_KINDS]
        clauses.append(f"{doc}.kind = any(%s)" if kinds else "false")
        params += [kinds] if kinds else []
    if filters.modified_since is not None:
        clauses.append(f"{doc}.mtime >= %s")
        params.append(float(filters.modified_since))
    if filters.modified_until is not None:
        clauses.append(f"{doc}.mtime <= %s")
        params.append(float(filters.modified_until))
    for path in filters.exclude_paths:
        under = below(path)
        clauses.append(f"not ({doc}.path = %s or left({doc}.path, %s) = %s)")
        params += [path, len(under), under]
    return " and ".join(clauses), params


def allowed_sql(filters: SearchFilters | None, chunk: str = "c", doc: str = "d") -> tuple[str, list[object]]:
    """True for a canonical chunk whose file, or any copy's file, passes ``filters``; ("", []) when unfiltered."""
    where, params = filter_sql(filters, doc)
    if not where:
        return "", []
    copy_where, copy_params = filter_sql(filters, "dx")
    return (f"(({where}) or exists (select 1 from chunks x join documents dx on dx.id = x.doc_id "
            f"where x.dup_of = {chunk}.id and {copy_where}))", [*params, *copy_params])


def allowed_ids_sql(filters: SearchFilters | None) -> tuple[str, list[object]]:
    """A SELECT of the canonical chunk ids ``filters`` allow (ids may repeat); ("", []) when unfiltered."""
    where, params = filter_sql(filters)
    if not where:
        return "", []
    return ("select coalesce(c.dup_of, c.id) as id from chunks c join documents d on d.id = c.doc_id where "
            + where, params)
