"""What each MCP tool does, as plain functions of the service (run on the library's worker thread).

Each returns the text a model reads and the structured content (schemas.py) saying the same. Every path that
leaves here goes through ``Library.show`` (the context path-style setting: relative to the indexed folder by
default), so nothing about the person's account or folder layout reaches a cloud model unless they chose it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
from collections import Counter
from collections.abc import Sequence

from ..context import passage_body, source_line
from ..errors import UserError
from ..models import WEAK, SearchFilters, SearchResult, StoredPassage
from ..paths import is_inside
from ..paths_guard import checked_glob
from ..service import MemoryService
from .library import Library, parse_when
from .schemas import (
    ContextOut,
    ContextPart,
    FileEntry,
    Folder,
    Hit,
    IndexOut,
    LaneRank,
    PassageOut,
    Piece,
    Problem,
    SearchOut,
    SourcesOut,
    Where,
)


@dataclasses.dataclass
class Filters:
    """The filter arguments shared by search and get_context, as the model gave them."""

    path: str | None = None
    glob: str | None = None
    kinds: Sequence[str] = ()
    modified_since: str | None = None
    modified_until: str | None = None

    def build(self, lib: Library, svc: MemoryService) -> SearchFilters:
        glob = checked_glob(self.glob, lib.roots(svc)) if self.glob and self.glob.strip() else None
        if glob and not glob.startswith(("/", "*")) and not os.path.isabs(glob):
            glob = "*/" + glob  # the model sees relative paths; the filter matches absolute ones
        return SearchFilters(
            path_prefix=existing(lib, svc, self.path) if self.path and self.path.strip() else None,
            path_glob=glob,
            kinds=tuple(dict.fromkeys(self.kinds)),
            modified_since=parse_when(self.modified_since) if self.modified_since else None,
            modified_until=parse_when(self.modified_until) if self.modified_until else None,
        )


def existing(lib: Library, svc: MemoryService, raw: str) -> str:
    """A path argument resolved inside the library (paths_guard), that is on disk or still holds indexed files; a
    path that is neither is an error that says so, not an empty answer the model would take for "nothing about
    it"."""
    target = lib.resolve(svc, raw)
    if os.path.lexists(target) or any(is_inside(d.path, target) for d in svc.documents()):
        return target
    raise UserError(f"{raw!r}: no such file or folder (it may have been moved or deleted; list_sources shows what "
                    "the library holds).")


def _shown(lib: Library, svc: MemoryService, results: Sequence[SearchResult]) -> list[SearchResult]:
    return [dataclasses.replace(r, source=lib.show(svc, r.source), also_in=[lib.show(svc, p) for p in r.also_in])
            for r in results]


# ---------------------------------------------------------------- search

def search(lib: Library, svc: MemoryService, query: str, *, top_k: int, backend: str | None,
           filters: Filters) -> tuple[str, SearchOut]:
    backend = backend or svc.settings.search.backend
    outcome = svc.search_outcome(query, backend=backend, top_k=top_k, filters=filters.build(lib, svc))
    results = _shown(lib, svc, outcome.results)
    hits = [Hit(rank=r.rank, id=r.chunk_id, source=r.source, kind=r.kind, location=Where.of(r.location),
                strength=r.strength, why=r.explain(), score=r.score, also_in=r.also_in,
                lanes={k: LaneRank(rank=v.rank, score=v.score) for k, v in sorted(r.lanes.items())},
                text=passage_body(r.text, r.location), machine=r.machine) for r in results]
    out = SearchOut(query=query, backend=backend, results=hits, weak=outcome.weak, notes=list(outcome.notes))
    lines = [f'{len(hits)} passage(s) for "{query}" ({backend} search).' if hits
             else f'No passages match "{query}" ({backend} search).']
    if hits and out.weak:
        lines.append("None of them is a strong match: the library may not hold what you are looking for.")
    lines += [f"Note: {n}" for n in out.notes]
    for h, r in zip(hits, results, strict=True):
        lines.append("")
        lines.append(f"#{h.rank} · id {h.id} · {h.strength} match · {h.why}")
        lines.append(source_line(f"{h.machine}: {h.source}" if r.remote else h.source, r.location))
        if h.also_in:
            lines.append("(also in: " + ", ".join(h.also_in) + ")")
        lines.append(h.text)
    if hits:
        lines += ["", "get_passage(id) gives a passage with its neighbours; get_context(query) gives a citable block."]
    return "\n".join(lines), out


# ---------------------------------------------------------------- get_context

def get_context(lib: Library, svc: MemoryService, query: str, *, budget: int | None, top_k: int,
                backend: str | None, filters: Filters, include_weak: bool) -> tuple[str, ContextOut]:
    # search and pack, as `desktop-memory context` does (sources named in the context path style)
    report, outcome = svc.context_outcome(query, budget, backend=backend, top_k=top_k,
                                          filters=filters.build(lib, svc), include_weak=include_weak)
    results = outcome.results
    weak = [] if include_weak else [r for r in results if r.strength == WEAK]
    weak = _shown(lib, svc, weak)
    by_id = {r.chunk_id: r for r in results}
    left = [ContextPart(rank=i.rank, id=i.chunk_id, header=i.header, tokens=i.tokens, reason="over budget")
            for i in report.dropped]
    left += [ContextPart(rank=r.rank, id=r.chunk_id, header=source_line(r.source, r.location),
                         tokens=0, reason="weak match") for r in weak]
    left.sort(key=lambda p: p.rank)
    out = ContextOut(
        query=query, text=report.text, tokens_used=report.tokens_used, budget=report.budget,
        included=[ContextPart(rank=i.rank, id=i.chunk_id, header=i.header, tokens=i.tokens, reason="")
                  for i in report.items if i.chunk_id in by_id],
        left_out=left, notes=list(outcome.notes))
    summary = (f"[{out.tokens_used}/{out.budget} tokens, {len(out.included)} passage(s)"
               + ("; left out: " + ", ".join(f"#{p.rank} ({p.reason})" for p in left) if left else "") + "]")
    if not out.included:
        why = "no passage matches" if not results else "no passage fits the budget or is a strong match"
        return f'No context for "{query}": {why}. {summary}', out
    return report.text + "\n\n" + summary, out


# ---------------------------------------------------------------- get_passage

def _piece(p: StoredPassage) -> Piece:
    return Piece(id=p.chunk_id, location=Where.of(p.location), text=passage_body(p.text, p.location))


def get_passage(lib: Library, svc: MemoryService, passage_id: int, neighbours: int) -> tuple[str, PassageOut]:
    found = svc.passage(passage_id, neighbours)
    if found is None:
        raise UserError(f"No passage with id {passage_id}: it may have been removed or re-indexed since it was "
                        "found. Search again for fresh ids.")
    p = found.passage
    source = lib.show(svc, p.source)
    out = PassageOut(id=p.chunk_id, source=source, kind=p.kind, location=Where.of(p.location),
                     text=passage_body(p.text, p.location), position=p.ord + 1, passages_in_file=found.chunks_in_file,
                     before=[_piece(q) for q in found.before], after=[_piece(q) for q in found.after])
    lines = [source_line(source, p.location), f"(passage {out.position} of {out.passages_in_file} in the file; "
             f"id {out.id})", ""]
    for q in out.before:
        lines += [f"--- before (id {q.id}{', ' + q.location.display if q.location.display else ''}) ---", q.text, ""]
    lines += ["=== the passage ===", out.text]
    for q in out.after:
        lines += ["", f"--- after (id {q.id}{', ' + q.location.display if q.location.display else ''}) ---", q.text]
    return "\n".join(lines), out


# ---------------------------------------------------------------- list_sources

def list_sources(lib: Library, svc: MemoryService, folder: str | None, status: str | None,
                 limit: int) -> tuple[str, SourcesOut]:
    stats = svc.stats()
    docs = svc.documents()
    roots = lib.roots(svc)
    folders = []
    for root in roots:
        mine = [d for d in docs if is_inside(d.path, root)]
        folders.append(Folder(path=lib.show(svc, root), files=dict(Counter(d.status for d in mine)),
                              chunks=sum(d.chunks for d in mine)))
    if folder and folder.strip():
        base = existing(lib, svc, folder)
        chosen = [d for d in docs if is_inside(d.path, base)]
        scope = f"files under {lib.show(svc, base)}"
    else:
        chosen = [d for d in docs if not any(is_inside(d.path, r) for r in roots)]
        scope = "files added on their own (not inside an indexed folder)"
    if status:
        chosen = [d for d in chosen if d.status == status]
        scope += f" with status {status}"
    files = [FileEntry(path=lib.show(svc, d.path), kind=d.kind, status=d.status, reason=d.error, passages=d.chunks,
                       embedded=d.vectors,
                       modified=dt.datetime.fromtimestamp(d.mtime, dt.timezone.utc).isoformat(timespec="seconds"))
             for d in chosen[:limit]]
    out = SourcesOut(folders=folders, files=files, files_total=len(chosen), documents=stats.documents,
                     passages=stats.chunks, vectors=stats.vectors, vectors_pending=stats.pending_vectors,
                     model=stats.model_id)
    counts = ", ".join(f"{n} {s}" for s, n in sorted(stats.documents.items())) or "no files"
    lines = [f"Library: {counts}; {stats.chunks} passages, {stats.vectors} with semantic vectors"
             + (f" ({stats.pending_vectors} waiting)" if stats.pending_vectors else "") + "."]
    if stats.removing_documents:  # counted above, but neither searchable nor listed: say why the numbers differ
        lines.append(f"A removal is in progress: {stats.removing_documents} file(s) counted above are being removed "
                     "by the library's owner and are not searched or listed.")  # (what they removed is not named)
    lines.append(f"Indexed folders ({len(folders)}):" if folders else "No indexed folders.")
    for f in folders:
        by = ", ".join(f"{n} {s}" for s, n in sorted(f.files.items())) or "empty"
        lines.append(f"  {f.path}  ({by}; {f.chunks} passages)")
    lines.append(f"{scope.capitalize()}: {len(chosen)}" + (f" (first {limit} shown)" if len(chosen) > limit else ""))
    for e in files:
        why = f"  ({e.reason})" if e.reason else ""
        lines.append(f"  {e.status:<8} {e.passages:>5} passages  {e.path}{why}")
    return "\n".join(lines), out


# ---------------------------------------------------------------- index_path

def index_path(lib: Library, svc: MemoryService, path: str) -> tuple[str, IndexOut]:
    target = lib.resolve(svc, path)  # a library folder or inside one (paths_guard), else refused
    if not os.path.lexists(target):  # gone from disk: nothing to read (removing it is the watcher's or `remove`'s)
        raise UserError(f"{path!r}: no such file or folder (it may have been moved or deleted; list_sources "
                        "shows what the library holds).")
    svc.finish_interrupted_removal()  # a removal a kill interrupted is finished before anything else is written
    summary = svc.index_paths([target])
    if summary.excluded and not summary.indexed + summary.unchanged + summary.skipped + summary.failed:
        raise UserError(f"{path!r} was removed from the library by its owner and stays out; only they can include "
                        "it again (desktop-memory include PATH, or Include again in the window).")
    problems = [Problem(path=lib.show(svc, o.path), status=o.status, reason=o.reason) for o in summary.problems()]
    shown = lib.show(svc, target)
    out = IndexOut(path=shown, indexed=summary.indexed, unchanged=summary.unchanged, skipped=summary.skipped,
                   failed=summary.failed, removed=summary.removed, passages_added=summary.chunks_added,
                   passages_embedded=summary.chunks_embedded, cancelled=summary.cancelled, problems=problems)
    text = (f"Indexed {shown}: {out.indexed} file(s) read, {out.unchanged} unchanged, {out.removed} removed, "
            f"{out.skipped} skipped, {out.failed} failed; {out.passages_added} passages added, "
            f"{out.passages_embedded} embedded.")
    if summary.embed_error:
        text += f"\nEmbedding stopped: {summary.embed_error} (keyword search still finds the new text)."
    for pr in problems[:20]:
        text += f"\n  {pr.status} {pr.path}: {pr.reason}"
    return text, out
