"""A tiny in-memory stand-in for MemoryService with the same signatures.

Used for GUI behaviour that must be forced (a deliberately slow search, a locked database, an embedder that
fails) and as a fallback while the real service cannot be imported. Real-service tests live beside it.
It satisfies the GUI's service boundary (desktop_memory.service_api.MemoryApi): ``_implements_api`` at the end
makes mypy prove it (`mypy tests/gui/fake_service.py`).
"""

from __future__ import annotations

import dataclasses
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from desktop_memory.config import EmbedderSettings, Settings
from desktop_memory.context import build_context as pack
from desktop_memory.errors import EmbedderError, StoreError, UserError
from desktop_memory.jobs import Scheduler
from desktop_memory.library_listing import listing_from_documents
from desktop_memory.model_servers import ModelServers
from desktop_memory.models import (
    ContextReport,
    DocumentInfo,
    FileOutcome,
    IndexProgress,
    IndexSummary,
    LaneHit,
    LibraryListing,
    LibraryQuery,
    Location,
    SearchFilters,
    SearchResult,
    Stats,
)
from desktop_memory.retrieve import SearchOutcome
from desktop_memory.service_api import MemoryApi, ProgressCallback

KINDS = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".py": "code", ".pdf": "pdf"}
_WORD = re.compile(r"\w+")


class FakeService:
    servers = ModelServers()  # the real probes: GUI tests point them at loopback servers (tests/support/)

    def __init__(self, settings: Settings | None = None, *, slow_queries: dict[str, float] | None = None,
                 embedder_error: str | None = None, open_error: str | None = None, file_delay: float = 0.0) -> None:
        if open_error:
            raise StoreError(open_error)
        self.settings = settings or Settings()
        self.slow_queries = slow_queries or {}
        self.embedder_error = embedder_error
        self.file_delay = file_delay
        self.docs: dict[str, DocumentInfo] = {}
        self.chunks: list[tuple[int, int, str, Location]] = []  # (chunk_id, doc_id, text, loc)
        self.lock = threading.Lock()
        self.search_calls: list[str] = []
        self.highlight_calls: list[str] = []
        self.warm_ups: list[tuple[bool, str]] = []  # (semantic, the thread it ran on)
        self.closed = False
        self.read_only_note = ""
        self.version = 0  # the change stamp: bumped by every write
        self._scheduler: Scheduler | None = None
        self._embedding_paused = False

    # -- indexing --
    def index_paths(self, paths: Iterable[str | Path], progress: ProgressCallback | None = None,
                    cancel: threading.Event | None = None, force: bool = False, embed: bool = True,
                    include_excluded: bool = False) -> IndexSummary:
        t0 = time.perf_counter()
        files: list[str] = []
        for p in map(str, paths):
            if os.path.isdir(p):
                for root, _dirs, names in os.walk(p):
                    files += [os.path.join(root, n) for n in sorted(names)]
            else:
                files.append(p)
        s = IndexSummary()
        for i, f in enumerate(files):
            if cancel is not None and cancel.is_set():
                s.cancelled = True
                break
            if self.file_delay:
                time.sleep(self.file_delay)  # deliberate: a slow worker (simulated work), not a wait for a condition
            kind = KINDS.get(Path(f).suffix.lower())
            st = os.stat(f)
            if kind is None:
                o = FileOutcome(f, "skipped", "not a supported file type")
                s.skipped += 1
            elif kind == "pdf" and "fuzzed" in f:
                o = FileOutcome(f, "failed", "damaged PDF: the page tree is invalid")
                s.failed += 1
            elif kind == "pdf" and "encrypted" in f:
                o = FileOutcome(f, "skipped", "encrypted PDF: needs a password")
                s.skipped += 1
            else:
                text = ("Here's to the crazy ones. The misfits. The rebels." if kind == "pdf"
                        else Path(f).read_text(encoding="utf-8", errors="replace"))
                with self.lock:
                    doc_id = len(self.docs) + 1
                    n = 0
                    for j, part in enumerate(p for p in text.split("\n\n") if p.strip()):
                        self.chunks.append((len(self.chunks) + 1, doc_id, part.strip(),
                                            Location(heading_path=("Section",), line_start=j + 1, line_end=j + 2)))
                        n += 1
                    self.docs[f] = DocumentInfo(doc_id, f, kind, "indexed", "", st.st_size, st.st_mtime, time.time(),
                                                n, n)
                o = FileOutcome(f, "indexed", "", n)
                s.indexed += 1
                s.chunks_added += n
            if o.status != "indexed":
                with self.lock:
                    self.docs[f] = DocumentInfo(len(self.docs) + 1, f, kind or "text", o.status, o.reason,
                                                st.st_size, st.st_mtime, time.time(), 0, 0)
            s.outcomes.append(o)
            with self.lock:
                self.version += 1
            if progress:
                progress(IndexProgress("extract", len(files), i + 1, f, s.chunks_added, s.chunks_added,
                                       s.chunks_added, time.perf_counter() - t0, 100.0, 1.0, o))
        s.elapsed_s = time.perf_counter() - t0
        return s

    def embed_pending(self, progress: ProgressCallback | None = None,
                      cancel: threading.Event | None = None) -> IndexSummary:
        return IndexSummary()

    def pending_removals(self) -> list[str]:
        return []

    def erasing_unfinished(self) -> bool:
        return False

    def exclusions(self) -> list[str]:
        return []

    def remove_paths(self, paths: Iterable[str | Path], progress: object = None, cancel: object = None,
                     exclude: bool = False) -> int:
        n = 0
        with self.lock:
            self.version += 1
            for p in map(str, paths):
                for path in [d for d in self.docs if d == p or d.startswith(p.rstrip(os.sep) + os.sep)]:
                    doc = self.docs.pop(path)
                    self.chunks = [c for c in self.chunks if c[1] != doc.id]
                    n += 1
        return n

    def load_embedder(self) -> None:
        if self.embedder_error:
            raise EmbedderError(self.embedder_error)

    def embedder_model_id(self) -> str:
        return "fake-embedder"

    def set_embedder_settings(self, new: EmbedderSettings) -> bool:
        old = self.settings.embedder
        self.settings = dataclasses.replace(self.settings, embedder=new)
        return new.kind != old.kind or new.ollama_model != old.ollama_model

    def choose_configured_model(self) -> bool:
        return False

    def apply_settings(self, settings: Settings) -> None:
        self.settings = dataclasses.replace(settings, embedder=self.settings.embedder)

    def change_stamp(self) -> tuple[int, ...]:
        with self.lock:
            return (self.version,)

    def roots(self) -> list[str]:
        return []

    def other_machines(self) -> dict[str, str]:
        return dict(getattr(self, "machines", {}))

    # -- search --
    def prepare_query(self, query: str, backend: str | None = None) -> bool:
        self.prepared = [*getattr(self, "prepared", []), query]
        return False

    def search_outcome(self, query: str, backend: str | None = None, top_k: int | None = None,
                       filters: SearchFilters | None = None, *, marks: bool = False) -> SearchOutcome:
        out = SearchOutcome(self._results(query, top_k))
        if marks and out.results:
            out.marked = {} if backend == "dense" else self._marked(query, [r.chunk_id for r in out.results])
        return out

    def _results(self, query: str, top_k: int | None) -> list[SearchResult]:
        self.search_calls.append(query)
        delay = self.slow_queries.get(query, 0.0)
        if delay:
            time.sleep(delay)  # deliberate: a slow worker (simulated work), not a wait for a condition
        terms = [w.lower() for w in _WORD.findall(query)]
        by_id = {d.id: d for d in self.docs.values()}
        scored: list[tuple[int, int, int, str, Location]] = []
        with self.lock:
            for cid, did, text, loc in self.chunks:
                low = text.lower()
                sc = sum(low.count(t) for t in terms)
                if sc:
                    scored.append((sc, cid, did, text, loc))
        scored.sort(key=lambda x: -x[0])
        out = []
        for rank, (sc, cid, did, text, loc) in enumerate(scored[: top_k or 10], 1):
            d = by_id[did]
            out.append(SearchResult(rank, 1 / (60 + rank), cid, did, d.path, d.kind, text, loc,
                                    {"fts": LaneHit(rank, float(sc))}, d.mtime))
        return out

    def build_context(self, results: Sequence[SearchResult], budget: int | None = None,
                      extra_roots: Sequence[str] = ()) -> ContextReport:
        return pack(results, self.settings.context.budget_tokens if budget is None else budget)

    def highlights(self, query: str, chunk_ids: Sequence[int]) -> dict[int, str]:
        self.highlight_calls.append(query)
        return self._marked(query, chunk_ids)

    def _marked(self, query: str, chunk_ids: Sequence[int]) -> dict[int, str]:
        """Like the keyword lane's marks (retrieve/highlight.py): every query word in a shown chunk, marked."""
        from desktop_memory.retrieve.highlight import MARK_END, MARK_START

        words = [w for w in _WORD.findall(query) if w]
        if not words:
            return {}
        pattern = re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)
        wanted = set(chunk_ids)
        with self.lock:
            texts = {cid: text for cid, _doc, text, _loc in self.chunks if cid in wanted}
        return {cid: pattern.sub(lambda m: MARK_START + m.group(0) + MARK_END, text) for cid, text in texts.items()
                if pattern.search(text)}

    def warm_up(self, cancel: threading.Event | None = None, *, semantic: bool = False) -> None:
        self.warm_ups.append((semantic, threading.current_thread().name))

    def embedding_paused(self) -> bool:
        return self._embedding_paused

    def set_embedding_paused(self, paused: bool) -> None:
        self._embedding_paused = paused

    def stats(self) -> Stats:
        by: dict[str, int] = {}
        for d in self.docs.values():
            by[d.status] = by.get(d.status, 0) + 1
        return Stats(by, len(self.chunks), len(self.chunks), 0, "fake.db", 4096, "fake", 8)

    def documents(self) -> list[DocumentInfo]:
        with self.lock:
            return list(self.docs.values())

    def library_listing(self, query: LibraryQuery, pages: Mapping[str, int],
                        eager_limit: int = 1000) -> LibraryListing:
        """As the store answers (store/doc_listing.py), computed over the in-memory documents."""
        docs = self.documents()
        if len(docs) <= eager_limit:
            whole = listing_from_documents(docs, LibraryQuery(sort=query.sort, descending=query.descending))
            return dataclasses.replace(whole, query=query, complete=True, roots=self.roots())
        found = listing_from_documents(docs, query)
        found.files = {k: found.files[k][:n] for k, n in pages.items() if k in found.files and n > 0}
        found.roots = self.roots()
        return found

    def library_page(self, query: LibraryQuery, folder_key: str, offset: int, limit: int) -> list[DocumentInfo]:
        return listing_from_documents(self.documents(), query).files.get(folder_key, [])[offset:offset + limit]

    def indexed_under(self, folder: str) -> dict[str, tuple[int, float]]:
        prefix = folder.rstrip("/") + "/"
        with self.lock:
            return {d.path: (d.size, d.mtime) for d in self.docs.values() if d.path.startswith(prefix)}

    def take_notices(self) -> list[str]:
        return []

    def compact(self, progress: object = None, cancel: object = None) -> tuple[int, int]:
        return 4096, 4096

    @property
    def scheduler(self) -> Scheduler:
        with self.lock:
            if self._scheduler is None:
                self._scheduler = Scheduler(FakeWrites(self))
            return self._scheduler

    def close(self) -> None:
        if self._scheduler is not None:
            self._scheduler.stop()
        self.closed = True


class FakeWrites:
    """The fake's writes as the scheduler's jobs make them (jobs.operations.LibraryWrites)."""

    def __init__(self, fake: FakeService) -> None:
        self.fake = fake

    def index_paths(self, paths: Iterable[str], progress: ProgressCallback | None = None,
                    cancel: threading.Event | None = None, force: bool = False, embed: bool = True,
                    include_excluded: bool = False) -> IndexSummary:
        return self.fake.index_paths(paths, progress, cancel, force, embed, include_excluded)

    def remove_paths(self, paths: Iterable[str], progress: ProgressCallback | None = None,
                     cancel: threading.Event | None = None, exclude: bool = False) -> int:
        return self.fake.remove_paths(paths, progress, cancel, exclude)

    def embed_pending(self, progress: ProgressCallback | None = None,
                      cancel: threading.Event | None = None) -> IndexSummary:
        return self.fake.embed_pending(progress, cancel)

    def choose_configured_model(self) -> bool:
        return self.fake.choose_configured_model()

    def reembed(self, progress: ProgressCallback | None = None,
                cancel: threading.Event | None = None) -> IndexSummary:
        return self.fake.embed_pending(progress, cancel)

    def compact(self, progress: ProgressCallback | None = None,
                cancel: threading.Event | None = None) -> tuple[int, int]:
        return self.fake.compact(progress, cancel)

    def include_paths(self, paths: Iterable[str]) -> list[str]:
        return []

    def drop_model_vectors(self, model_id: str) -> int:
        return 0

    def check_full(self, progress: Callable[[str, int, int], None] | None = None,
                   cancel: threading.Event | None = None) -> list[str]:
        return []  # the fake's rows are always consistent

    def hold_writer(self, work: Callable[[Any], Any]) -> Any:
        return work(self.fake)  # (the fake has no writer to hold)

    def copy_from(self, source: Any, machine: tuple[str, str], allow_other_model: bool,
                  progress: Callable[[int, int], None], cancel: threading.Event | None, slice_size: int) -> Any:
        raise UserError("the fake library holds no rows a copy could take: copy is tested on real stores")

    def embedding_paused(self) -> bool:
        return self.fake.embedding_paused()

    def set_embedding_paused(self, paused: bool) -> None:
        self.fake.set_embedding_paused(paused)

    def pending_removals(self) -> list[str]:
        return self.fake.pending_removals()

    def erasing_unfinished(self) -> bool:
        return self.fake.erasing_unfinished()

    def removing_documents(self) -> int:
        return self.fake.stats().removing_documents


def _implements_api(fake: FakeService) -> MemoryApi:
    """Never called: mypy checks here that the fake offers every call of the GUI's boundary, typed alike."""
    return fake
