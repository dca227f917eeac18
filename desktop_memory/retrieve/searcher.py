"""Run a query through the chosen backend's lanes, fuse, and hydrate results with their source and location."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from ..config import BACKENDS, SearchSettings
from ..embed.base import Embedder
from ..errors import EmbedderError, UserError
from ..models import STRONG, LaneHit, SearchFilters, SearchResult
from ..store.protocol import LibraryStore
from .copies import resolve_holders
from .filters import clean_query, clean_top_k
from .fusion import ZSCORE_DEPTH, Fused, fuse
from .lanes import dense_lane, fetch_rows, fts_lane
from .query_vectors import TimedVector
from .rerank import HttpReranker, rerank_fused
from .search_state import SearchState
from .strength import judge, lane_scale, strong_only
from .wording import Wording

# Every lane ranks at least this many chunks, whatever top_k is: a fusion's top 10 then does not depend on how
# many results were asked for (up to top_k = LANE_DEPTH / overfetch), and a chunk ranked 60th by one lane still
# earns its share. Ranking 200 instead of 50 costs nothing measurable (FTS5 scores every match either way; the
# dense lane re-scores >= 1,000 candidates either way) and ranks slightly better (docs/BENCHMARKS.md, "Chunk size").
LANE_DEPTH = max(200, ZSCORE_DEPTH)
GROUP_HORIZON = 5  # the first screen looks this many top_k deep for distinct files
# strong_first lifts a strong result from anywhere at this cosine (SciFact train, within Cranfield's check)
COS_CLOSE = 0.75
BACKEND_LANES: dict[str, tuple[str, ...]] = {
    "hybrid": ("fts", "dense"),
    "keyword": ("fts",),
    "bm25": ("bm25",),
    "dense": ("dense",),
}


EMBED_THREADS = 2  # query embeddings that may run at once (the GUI, the popup and the MCP server share a process)
LANE_THREADS = 2  # keyword lanes that may run beside a semantic lane at once
_POOL: list[ThreadPoolExecutor] = []  # the one pool, once started
_LANE_POOL: list[ThreadPoolExecutor] = []
_POOL_LOCK = threading.Lock()
# A free reader connection for a helper thread, or None (MemoryService._spare_reader; see service.py's module doc)
SpareReader = Callable[[], AbstractContextManager["LibraryStore | None"]]


def _embed_pool() -> ThreadPoolExecutor:
    """The process's query-embedding threads, started once and kept (threads stay flat over a long session).

    A hybrid search embeds its query here while the keyword lane runs (on the calling thread, or on a lane thread
    with a second reader: ``_lane_pool``): onnxruntime and SQLite both release the GIL, so the two overlap on two
    cores (measured in docs/BENCHMARKS.md, "Retrieval, second pass"). These threads never touch a database
    connection."""
    return _started(_POOL, EMBED_THREADS, "dm-query-embed")


def _lane_pool() -> ThreadPoolExecutor:
    """The process's keyword-lane threads, started once and kept: a hybrid search runs its keyword lane here, on a
    second reader connection leased for that search only, while the calling thread embeds the query and runs the
    semantic lane on its own connection (apsw, numpy and onnxruntime release the GIL)."""
    return _started(_LANE_POOL, LANE_THREADS, "dm-keyword-lane")


def _started(holder: list[ThreadPoolExecutor], workers: int, name: str) -> ThreadPoolExecutor:
    """The pool kept in ``holder``, started on first use (one per process, never shut down while it runs)."""
    with _POOL_LOCK:
        if not holder:
            holder.append(ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name))
        return holder[0]


def _timed_fts(store: LibraryStore, query: str, limit: int, filters: SearchFilters | None,
               budget: int) -> tuple[list[tuple[int, float]], float]:
    t0 = time.perf_counter()
    ranked = fts_lane(store, query, limit, filters, term_budget=budget)
    return ranked, (time.perf_counter() - t0) * 1000


def _waited(pending: Future[TimedVector]) -> TimedVector:
    """The query's vector and the milliseconds this search waited for it (0 when it was embedded as it was typed;
    a failed embedding raises here, in the search that needs it)."""
    t0 = time.perf_counter()
    vec, _took = pending.result()
    return vec, (time.perf_counter() - t0) * 1000


@dataclass
class SearchOutcome:
    results: list[SearchResult]
    notes: list[str] = field(default_factory=list)  # e.g. "semantic lane off: embedder unreachable"
    timings_ms: dict[str, float] = field(default_factory=dict)  # embed, fts, dense, bm25, fuse, rerank, fetch, total
    weak: bool = False  # no strong match at all ("no strong matches" in the window; an empty context by default)
    # the first screen: the best passage of each of the top_k best files, best first; each carries the chunk ids
    # of that file's other passages ranked before the last file shown (``more_in_file``: "+2 more in this file")
    files: list[SearchResult] = field(default_factory=list)
    # with search_outcome(marks=True) (the window): {chunk id: text with what the keyword lane matched marked} for the
    # results, read on the search's own reader; None when not asked for or when highlighting failed
    marked: dict[int, str] | None = None

    def strong_results(self) -> list[SearchResult]:
        """The passages called strong: what the prompt context takes by default (``strength.strong_only``)."""
        return strong_only(self.results)


class Searcher:
    """Stateless per query; what searches keep between queries (the code matrices, the rank-bm25 index) is in
    ``state``, the owner's (a service hands its own to every Searcher it makes; without one it is this one's)."""

    def __init__(self, settings: SearchSettings, state: SearchState | None = None,
                 reranker: HttpReranker | None = None) -> None:
        self.settings = settings
        self.state = state or SearchState()
        # the optional rerank stage (retrieve/rerank.py); creating it contacts nothing
        self.reranker = reranker or (HttpReranker.from_settings(settings) if settings.rerank else None)

    def lane_weights(self) -> dict[str, float]:
        s = self.settings
        return {"fts": s.keyword_weight, "bm25": s.keyword_weight, "dense": s.dense_weight}

    def prepare(self, store: LibraryStore, embedder: Embedder | None, query: str) -> Future[TimedVector] | None:
        """Start embedding ``query`` for a search about to come (the window, as the query is typed): that search
        then waits for this vector instead of embedding again (retrieve/query_vectors.py). Returns at once: the
        vector's future, or None when this library's semantic lane cannot run."""
        query = clean_query(query)
        if not query or embedder is None or self._dense_readiness(store, embedder)[0] is not None:
            return None
        return self.state.query_vectors.vector(embedder, query, _embed_pool())

    def search(
        self,
        store: LibraryStore,
        embedder: Embedder | None,
        query: str,
        *,
        backend: str | None = None,
        top_k: int | None = None,
        filters: SearchFilters | None = None,
        spare_reader: SpareReader | None = None,
    ) -> SearchOutcome:
        """``spare_reader``: where a hybrid search may get a second connection for its keyword lane, run then on a
        lane thread beside the semantic lane (same results as one after the other; without a free reader the
        lanes run on ``store`` in turn)."""
        with contextlib.ExitStack() as stack:
            return self._search(store, embedder, query, backend, top_k, filters, spare_reader, stack)

    def _search(self, store: LibraryStore, embedder: Embedder | None, query: str, backend: str | None,
                top_k: int | None, filters: SearchFilters | None, spare_reader: SpareReader | None,
                stack: contextlib.ExitStack) -> SearchOutcome:
        t0 = time.perf_counter()
        backend = backend or self.settings.backend
        if backend not in BACKENDS:
            raise UserError(f"Unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}.")
        top_k = clean_top_k(top_k, self.settings.top_k)  # the one place outside input is made valid (filters.py)
        query = clean_query(query)
        out = SearchOutcome(results=[])
        if not query:
            return out
        self.state.searched(str(store.path))
        fetch = max(LANE_DEPTH, top_k * max(1, self.settings.overfetch))
        names = BACKEND_LANES[backend]
        unavailable, dim = self._dense_readiness(store, embedder) if "dense" in names else (None, None)
        pending: Future[TimedVector] | None = None
        if "dense" in names and unavailable is None and embedder is not None:
            # overlaps the keyword lane; already made or on its way when the window asked while it was typed
            pending = self.state.query_vectors.vector(embedder, query, _embed_pool())
        budget = self.settings.keyword_term_budget
        beside = None  # the keyword lane on a lane thread and a second connection, while this thread goes on
        if pending is not None and "fts" in names and spare_reader is not None:
            other = stack.enter_context(spare_reader())
            if other is not None:
                beside = _lane_pool().submit(_timed_fts, other, query, fetch, filters, budget)
                # registered after the lease: on any exit the lane thread is done with ``other`` before it goes back
                stack.callback(futures_wait, [beside])
        lanes: dict[str, list[tuple[int, float]]] = {}
        for lane in (names if beside is None else [n for n in names if n != "fts"]):
            ts = time.perf_counter()
            if lane == "fts":
                lanes["fts"] = fts_lane(store, query, fetch, filters, term_budget=budget)
            elif lane == "bm25":
                lanes["bm25"] = self.state.bm25.search(store, query, fetch, filters)
            else:  # dense times its own query embedding and KNN separately
                ranked = self._dense(store, embedder, query, fetch, filters, out, unavailable, dim, pending,
                                     strict=backend == "dense")
                if ranked is not None:
                    lanes["dense"] = ranked
                continue
            out.timings_ms[lane] = (time.perf_counter() - ts) * 1000
        if beside is not None:
            lanes["fts"], out.timings_ms["fts"] = beside.result()
            lanes = {n: lanes[n] for n in names if n in lanes}  # the lanes in their usual order, as when sequential
        if names == ("dense",) and "dense" not in lanes:  # the embedder failed: the keyword lane answers instead
            ts = time.perf_counter()
            lanes["fts"] = fts_lane(store, query, fetch, filters, term_budget=budget)
            out.timings_ms["fts"] = (time.perf_counter() - ts) * 1000
        ts = time.perf_counter()
        unvectored = _not_embedded_yet(store, lanes)
        fused = fuse(lanes, self.lane_weights(), method=self.settings.fusion, rrf_k=self.settings.rrf_k,
                     unjudged={"dense": unvectored} if unvectored else None)
        out.timings_ms["fuse"] = (time.perf_counter() - ts) * 1000
        reranked = False
        if self.reranker is not None:
            ts = time.perf_counter()
            ordered = rerank_fused(store, self.reranker, query, fused, self.settings.rerank_depth, out.notes)
            reranked, fused = ordered is not fused, ordered
            out.timings_ms["rerank"] = (time.perf_counter() - ts) * 1000
        ts = time.perf_counter()
        scale = lane_scale(store, query, lanes)
        # judged by meaning only when the semantic lane found something: right after a read (no vectors yet) every
        # result would otherwise be "weak" for want of a cosine, and the context would stay empty; a passage the
        # embedding has not reached is judged by its keywords (strength.py)
        semantic, keyword = bool(lanes.get("dense")), "fts" in lanes or "bm25" in lanes
        ranked_kw = lanes.get("fts") or lanes.get("bm25")
        wording = Wording(store, query, ranked_kw) if ranked_kw and semantic else None
        verdicts = {cid: judge(hits, scale, semantic=semantic, keyword=keyword, vector=cid not in unvectored,
                               wording=wording, chunk_id=cid) for cid, _, hits in fused}
        if not reranked:  # a reranker's order stands: the person chose it as the better judge (docs/RETRIEVAL.md)
            fused = strong_first(fused, verdicts)
        out.results, out.files = _hydrate(store, fused, top_k, filters, verdicts)
        waiting = sum(cid in unvectored for cid, _, _ in fused[:len(out.results)])
        if waiting:
            out.notes.append(f"{waiting} of these passages {'is' if waiting == 1 else 'are'} not embedded yet: "
                             "ranked and judged by their keywords")
        out.weak = not any(r.strength == STRONG for r in out.results)
        out.timings_ms["fetch"] = (time.perf_counter() - ts) * 1000
        out.timings_ms["total"] = (time.perf_counter() - t0) * 1000
        return out

    @staticmethod
    def _dense_readiness(store: LibraryStore, embedder: Embedder | None) -> tuple[str | None, int | None]:
        """(why the semantic lane cannot run for this library and embedder, or None when it can; the index's
        vector dimension), from one read of the index's model record."""
        model_id, dim = store.model_info()
        if embedder is None:
            return "no embedder configured", dim
        if model_id is None or not store.has_vector_table():
            return "no vectors yet (embedding has not run)", dim
        if model_id != embedder.model_id:
            return (f"index holds {model_id} vectors but the embedder is {embedder.model_id}; re-embed to use it",
                    dim)
        return None, dim

    def _dense(self, store: LibraryStore, embedder: Embedder | None, query: str, fetch: int,
               filters: SearchFilters | None, out: SearchOutcome, reason: str | None, dim: int | None,
               pending: Future[TimedVector] | None, *, strict: bool) -> list[tuple[int, float]] | None:
        """The semantic lane, or None with a note when it cannot run (hybrid degrades to keyword; dense raises).
        ``reason`` and ``dim`` come from ``_dense_readiness``; ``pending``: the query's embedding, already started
        on the embedding threads."""
        failed = False  # the embedder itself failed (a broken setting or server): keyword results, never a crash
        if reason is None and embedder is not None:
            try:
                qvec, out.timings_ms["embed"] = (_waited(pending) if pending is not None
                                                 else _waited(self.state.query_vectors.vector(embedder, query,
                                                                                              _embed_pool())))
            except Exception as exc:  # EmbedderError, and whatever else a bad setting causes (issue 30, item 3)
                reason, failed = embedder_failure(exc), True
            else:
                ts = time.perf_counter()
                if qvec.shape[-1] != dim:
                    reason = f"query vector has {qvec.shape[-1]} dims but the index holds {dim}"
                else:
                    ranked = dense_lane(store, qvec, fetch, filters, self.state.codes)
                    out.timings_ms["dense"] = (time.perf_counter() - ts) * 1000
                    return ranked
        if strict and not failed:
            raise EmbedderError(f"Semantic search is unavailable: {reason}.")
        out.notes.append(f"semantic search unavailable, keyword results instead: {reason}" if strict
                         else f"semantic lane off: {reason}")
        return None


def embedder_failure(exc: BaseException) -> str:
    """An embedder's failure in words for a search's note: a UserError's own sentence; for anything else (a bug
    or a library's error a bad setting set off) its kind and first line, never a traceback."""
    if isinstance(exc, UserError):
        return str(exc)
    first = (str(exc).splitlines() or [""])[0][:200]
    return f"the embedder failed ({type(exc).__name__}{': ' + first if first else ''})"


def _not_embedded_yet(store: LibraryStore, lanes: dict[str, list[tuple[int, float]]]) -> set[int]:
    """The keyword lanes' chunks that have no vector yet, when the semantic lane ran beside them (else empty).

    Every chunk the semantic lane ranked has a vector, so only the keyword lanes' other hits are looked up: one
    read by primary key of at most a few hundred ids. On a fully embedded library the set is empty and fusion and
    strength are exactly what they were."""
    if "dense" not in lanes:
        return set()
    judged = {cid for cid, _ in lanes["dense"]}
    others = {cid for lane, ranked in lanes.items() if lane != "dense" for cid, _ in ranked if cid not in judged}
    return store.reads.without_vectors(others) if others else set()


def strong_first(fused: Fused, verdicts: dict[int, tuple[str, str]]) -> Fused:
    """The fused (or reranked) list with the results whose strength earns a place before the others.

    Lifted, in fused order, before everything else: a result strong by the question's wording (its reason is
    evidence fusion does not have: the question's distinctive words, in this passage ahead of every other file),
    and a strong one as close in meaning as cosine ``COS_CLOSE`` (a weak #1 at semantic #13, cos 0.40, is not shown
    above the page that answers at semantic #1, cos 0.8; issue 23). Every other result keeps its fused place: a
    cosine just over a threshold is already in the fused score, and sorting the whole list strong-first cost
    SciFact test 0.0046 nDCG@10 (issue 30; RETRIEVAL.md, "Strong before weak"). The rule looks at each result
    alone, never at how many were asked for, so "show 10" stays the head of "show 40"."""
    def lifted(cid: int, hits: dict[str, LaneHit]) -> bool:
        strength, reason = verdicts.get(cid, (STRONG, ""))
        dense = hits.get("dense")
        return strength == STRONG and (bool(reason) or (dense is not None and dense.score >= COS_CLOSE))

    up = [lifted(cid, hits) for cid, _, hits in fused]
    return [e for e, u in zip(fused, up) if u] + [e for e, u in zip(fused, up) if not u]


def _hydrate(store: LibraryStore, fused: Fused, top_k: int, filters: SearchFilters | None,
             verdicts: dict[int, tuple[str, str]]) -> tuple[list[SearchResult], list[SearchResult]]:
    """(passages, files): the top_k fused passages, and the best passage of each of the top_k best files.

    Each passage is shown in its own file, or, when a filter leaves that file out, in the first collapsed copy
    inside the filter (copies.py); ``also_in`` names every other file holding it."""
    out: list[SearchResult] = []
    files: dict[int, SearchResult] = {}
    window = 0  # fused entries examined
    pos = 0  # rank among the live entries (a file row beyond the top_k passages keeps its place in the ranking)
    step = max(top_k * 2, 32)
    horizon = min(len(fused), max(top_k * GROUP_HORIZON, 50))  # "+N more in this file" counts within this
    while window < horizon and (len(out) < top_k or len(files) < top_k):
        part = fused[window:min(horizon, window + step)]
        window += len(part)
        holders = resolve_holders(store, [cid for cid, _, _ in part], filters)
        rows = fetch_rows(store, [h.shown.chunk_id for h in holders.values()])
        for cid, score, hits in part:
            h = holders.get(cid)
            row = rows.get(h.shown.chunk_id) if h else None
            if h is None or row is None:  # deleted between lanes and fetch by a concurrent writer
                continue
            shown_id, doc_id, path, kind, text, *_, mtime = row
            if len(out) >= top_k and doc_id not in files and len(files) >= top_k:
                break
            pos += 1
            res = SearchResult(rank=pos, score=score, chunk_id=shown_id, doc_id=doc_id, source=path,
                               kind=kind, text=text, location=row.location(), lanes=hits, mtime=mtime,
                               strength=verdicts.get(cid, (STRONG, ""))[0], also_in=h.also_in(),
                               strength_reason=verdicts.get(cid, (STRONG, ""))[1])
            if len(out) < top_k:
                out.append(res)
            best = files.get(doc_id)
            if best is None:
                if len(files) < top_k:
                    files[doc_id] = res
            else:
                best.more_in_file.append(shown_id)
    return out, list(files.values())
