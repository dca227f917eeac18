"""Dataset mode: index a BEIR corpus through the app's real pipeline (cached), run every query, score, time.

Indexing: each corpus document is written as ``<id>.txt`` (title, blank line, text) into a temporary folder and
indexed with ``MemoryService.index_paths`` (walk → read → chunk → FTS commit → embed → vectors), exactly as a
person dropping that folder on the app would. The database is cached, keyed by the corpus, the model and the
chunk settings, so a second run scores queries without re-embedding.

Searching: every query goes through ``MemoryService.search_outcome``. Two passes per backend:

- a quality pass asking for enough chunks to rank ``depth`` (100) distinct documents; chunk hits are aggregated
  to documents (a document ranks where its best chunk ranks), since judgments are per document;
- a latency pass at the app's own ``top_k`` (10): per-part timings come from ``SearchOutcome.timings_ms``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import platform
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from desktop_memory.config import BACKENDS, EmbedderKind, EmbedderSettings, SearchSettings, Settings, data_dir
from desktop_memory.embed import make_embedder
from desktop_memory.embed.base import Embedder
from desktop_memory.embed.local_onnx import MIN_TOKENS, LocalOnnxEmbedder
from desktop_memory.errors import UserError
from desktop_memory.models import IndexProgress

from .bulk import bulk_write
from .dataset import DOC_FORMAT_VERSION, BeirDataset, corpus_fingerprint, doc_id_from_path, load_beir, materialise
from .latency import RssSampler, collect, load_average, percentile, process_peak_rss, summarise
from .metrics import evaluate
from .nonsense import corpus_vocabulary, nonsense_queries

if TYPE_CHECKING:
    from desktop_memory.service import MemoryService
    from desktop_memory.store import Store

MB = 1024 * 1024
SIDECAR_SUFFIX = ".bench.json"
BASELINE_SAMPLE = 256  # chunks embedded twice (real path vs naive fixed padding) for the tokens/s comparison


@dataclass
class BenchOptions:
    dataset: Path
    backends: list[str] = field(default_factory=lambda: list(BACKENDS))
    split: str = "test"
    limit_queries: int | None = None
    db: Path | None = None
    rebuild: bool = False
    top_k: int | None = None  # latency pass top_k; None = the app default (settings.search.top_k)
    depth: int = 100  # documents ranked per query in the quality pass
    repeat: int = 1  # latency passes over the query set
    nonsense: int = 300  # generated nonsense queries per backend (share called weak); 0 = skip
    baseline: bool = True  # measure the naive fixed-padding embedder for comparison
    embedder: EmbedderKind = "local"  # "local" (the app's default model) or "hash" (tests only)
    doc_format: str = "md"  # how a corpus document becomes a file: "md" (# title) or "txt" (see dataset.doc_text)
    search_overrides: dict[str, Any] = field(default_factory=dict)
    chunk_overrides: dict[str, Any] = field(default_factory=dict)
    max_tokens: int | None = None  # embedder truncation override (part of the index cache key)
    # model servers (`--embedder openai --embedder-url … --rerank-url …`): EmbedderSettings / SearchSettings names
    servers: dict[str, Any] = field(default_factory=dict)
    log: Callable[[str], None] | None = None


def bench_settings(opts: BenchOptions) -> Settings:
    """The app's defaults (not the user's config: figures must be reproducible), plus explicit overrides."""
    s = Settings()
    embedder = dataclasses.replace(s.embedder, kind=opts.embedder, threads=0)
    if opts.max_tokens is not None:
        if opts.max_tokens < MIN_TOKENS:
            raise UserError(f"--max-tokens must be at least {MIN_TOKENS}")
        embedder = dataclasses.replace(embedder, max_tokens=int(opts.max_tokens))
    search = s.search
    for key, value in opts.search_overrides.items():
        if not hasattr(search, key):
            raise UserError(f"unknown search setting {key!r}")
        search = dataclasses.replace(search, **{key: type(getattr(search, key))(value)})
    chunking = s.chunking
    for key, value in opts.chunk_overrides.items():
        if not hasattr(chunking, key):
            raise UserError(f"unknown chunk setting {key!r}")
        chunking = dataclasses.replace(chunking, **{key: type(getattr(chunking, key))(value)})
    embedder, search = _server_settings(embedder, search, opts.servers)
    s = dataclasses.replace(s, embedder=embedder, search=search, chunking=chunking)
    return s


def _server_settings(embedder: EmbedderSettings, search: SearchSettings,
                     servers: dict[str, Any]) -> tuple[EmbedderSettings, SearchSettings]:
    """An OpenAI-compatible embedder (prefixes of known models pre-filled, as Settings does) and the rerank stage."""
    from desktop_memory.embed import known_prefixes

    emb = {k: v for k, v in servers.items() if hasattr(embedder, k)}
    if embedder.kind == "openai":
        known = known_prefixes(str(emb.get("openai_model", "")))
        if known is not None:
            embedder = dataclasses.replace(embedder, query_prefix=known[0], document_prefix=known[1])
    embedder = dataclasses.replace(embedder, **emb)
    rr = {k: v for k, v in servers.items() if k.startswith("rerank_")}
    if rr:
        search = dataclasses.replace(search, rerank=True, **rr)
    return embedder, search


def cache_key(fingerprint: str, settings: Settings, embedder: Embedder, doc_format: str = "md") -> str:
    payload = {
        "corpus": fingerprint,
        "doc_format": DOC_FORMAT_VERSION if doc_format == "txt" else [DOC_FORMAT_VERSION, doc_format],
        "model": embedder.model_id,
        "max_tokens": settings.embedder.max_tokens,
        "document_prefix": settings.embedder.document_prefix,
        "chunking": dataclasses.asdict(settings.chunking),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def default_cache_path(ds_name: str, key: str) -> Path:
    return data_dir() / "bench-cache" / f"{ds_name}-{key[:12]}.db"


def _sidecar(db: Path) -> Path:
    return db.with_name(db.name + SIDECAR_SUFFIX)


def _remove_db(db: Path) -> None:
    for suffix in ("", "-wal", "-shm", SIDECAR_SUFFIX):
        p = Path(str(db) + suffix)
        if p.exists():
            p.unlink()
    for bak in db.parent.glob(db.name + ".bak-v*"):
        bak.unlink()


def machine_info() -> dict[str, Any]:
    import onnxruntime
    import sqlite_vec

    from desktop_memory.store.connection import open_connection
    from desktop_memory.store.sql_values import scalar

    try:
        conn = open_connection(":memory:")
        vec_version = scalar(conn, "select vec_version()")
        sqlite_version = scalar(conn, "select sqlite_version()")
        conn.close()
    except Exception:  # pragma: no cover - reported, not fatal
        vec_version = sqlite_version = "?"
    return {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "sqlite": sqlite_version,
        "sqlite_vec": vec_version,
        "onnxruntime": onnxruntime.__version__,
        "sqlite_vec_pkg": getattr(sqlite_vec, "__version__", "?"),
        "load_avg_start": load_average(),
    }


# ---------------------------------------------------------------- indexing


def naive_fixed_padding_tokens_per_s(embedder: Embedder, texts: list[str]) -> dict[str, float] | None:
    """Embed ``texts`` the naive way (input order, every row padded to max_tokens) and the app's way.

    Returns real tokens/s of both on the same sample, or None for embedders without an ONNX session.
    """
    if not isinstance(embedder, LocalOnnxEmbedder):
        return None
    tok, session = embedder._tokenizer, embedder._session
    if tok is None or session is None or not texts:
        return None
    width = int(embedder.settings.max_tokens)
    batch = max(1, int(embedder.settings.batch_size or 32))
    names = embedder._input_names
    pad = embedder._pad_id
    real_tokens = sum(embedder.count_tokens(texts))

    t0 = time.perf_counter()
    encs = tok.encode_batch(texts)
    for start in range(0, len(encs), batch):
        rows = encs[start : start + batch]
        ids = np.full((len(rows), width), pad, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for r, e in enumerate(rows):
            ids[r, : len(e.ids)] = e.ids
            mask[r, : len(e.ids)] = 1
        arrays = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = session.run(None, {n: arrays[n] for n in names})[0]
        m = mask[..., None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        _ = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    naive_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    embedder.embed_documents(texts)
    real_s = time.perf_counter() - t0
    return {
        "sample_chunks": len(texts),
        "sample_tokens": real_tokens,
        "naive_fixed_padding_tokens_per_s": real_tokens / naive_s,
        "app_tokens_per_s": real_tokens / real_s,
        "speedup": naive_s / real_s,
    }


def build_index(ds: BeirDataset, db: Path, settings: Settings, embedder: Embedder, key: str,
                log: Callable[[str], None], doc_format: str = "md", *, baseline: bool = True) -> dict[str, Any]:
    """Index the corpus into ``db`` through MemoryService.index_paths; returns the index figures.

    ``baseline=False`` (``bench --no-baseline``) skips the naive fixed-padding comparison (~256 chunks embedded
    twice more in a child process)."""
    from desktop_memory.service import MemoryService

    from .naive_baseline import run_in_child

    _remove_db(db)
    db.parent.mkdir(parents=True, exist_ok=True)
    _sidecar(db).write_text(json.dumps({"key": key, "status": "building"}))
    t_load = time.perf_counter()
    embedder.load()  # the app loads the model in the background at start-up; timed on its own
    model_load_s = time.perf_counter() - t_load
    with tempfile.TemporaryDirectory(prefix="dm-bench-") as tmp:
        folder = Path(tmp) / ds.name
        t0 = time.perf_counter()
        corpus_bytes = materialise(ds.corpus, folder, doc_format)
        materialise_s = time.perf_counter() - t0
        log(f"indexing {len(ds.corpus)} documents from {folder} into {db} …")
        svc = MemoryService(settings, db_path=db, embedder=embedder)
        marks: dict[str, float] = {}
        last_print = [0.0]

        def progress(p: IndexProgress) -> None:
            if p.phase == "extract":
                marks["extract_end"] = p.elapsed_s
            elif p.phase == "embed":
                marks.setdefault("embed_start", p.elapsed_s)
                if p.elapsed_s - last_print[0] > 30:
                    last_print[0] = p.elapsed_s
                    log(f"  embedded {p.chunks_embedded}/{p.chunks_to_embed} chunks ({p.chunks_per_s:.1f}/s)")

        try:
            with RssSampler() as rss:
                summary = svc.index_paths([folder], progress=progress)
            if summary.cancelled:
                raise UserError("indexing was cancelled")
            if summary.embed_error:
                raise UserError(f"embedding failed: {summary.embed_error}")
            def measured(store: Store) -> tuple[list[str], dict[str, int], int]:
                store.conn.execute("pragma wal_checkpoint(TRUNCATE)")
                texts = [t for (t,) in store.conn.execute("select text from chunks where dup_of is null order by id")]
                return texts, store.counts(), store.db_bytes()

            texts, counts, db_bytes = bulk_write(svc, measured)  # (it reads SQLite's own tables)
        finally:
            svc.close()
    tokens = 0
    for start in range(0, len(texts), 1024):
        tokens += sum(embedder.count_tokens(texts[start : start + 1024]))
    naive = None
    if texts and baseline:
        sample = random.Random(0).sample(texts, min(BASELINE_SAMPLE, len(texts)))
        log(f"naive fixed-padding baseline on {len(sample)} chunks …")
        naive = run_in_child(settings, sample) if getattr(embedder, "_session", None) is not None else None
    total = summary.elapsed_s
    embed_s = summary.embed_s
    docs = summary.indexed
    chunks = counts["chunks"]
    figures = {
        "cached": False,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "doc_format": doc_format,
        "documents": docs,
        "documents_failed": summary.failed,
        "documents_skipped": summary.skipped,
        "chunks": chunks,
        "canonical_chunks": len(texts),
        "duplicates_collapsed": counts["duplicates"],
        "vectors": counts["vectors"],
        "chunks_per_doc": chunks / docs if docs else 0.0,
        "tokens": tokens,
        "corpus_bytes": corpus_bytes,
        "model_load_s": model_load_s,
        "materialise_s": materialise_s,
        "total_s": total,
        "extract_chunk_s": summary.extract_s,
        "embed_s": embed_s,
        "store_s": summary.store_s,
        "other_s": max(0.0, total - summary.extract_s - embed_s - summary.store_s),
        "non_embed_share": (total - embed_s) / total if total else 0.0,
        "docs_per_s": docs / total if total else 0.0,
        "chunks_per_s": chunks / total if total else 0.0,
        "tokens_per_s": tokens / total if total else 0.0,
        "embed_chunks_per_s": len(texts) / embed_s if embed_s else 0.0,
        "embed_tokens_per_s": tokens / embed_s if embed_s else 0.0,
        "extract_docs_per_s": docs / summary.extract_s if summary.extract_s else 0.0,
        "store_chunks_per_s": chunks / summary.store_s if summary.store_s else 0.0,
        "keyword_searchable_s": marks.get("extract_end", 0.0),
        "fully_embedded_s": total,
        "baseline": naive,
        "db_bytes": db_bytes,
        "db_mb": db_bytes / MB,
        "peak_rss_mb": rss.peak / MB,
        "rss_growth_mb": rss.growth / MB,
        "load_avg_end": load_average(),
    }
    _sidecar(db).write_text(json.dumps({"key": key, "status": "complete", "index": figures}, indent=2))
    return figures


def open_or_build(ds: BeirDataset, opts: BenchOptions, settings: Settings, embedder: Embedder,
                  log: Callable[[str], None]) -> tuple[Path, dict[str, Any]]:
    """(db path, index figures). Reuses a complete cached index with the same key; builds it otherwise."""
    key = cache_key(corpus_fingerprint(ds.root), settings, embedder, opts.doc_format)
    db = opts.db.expanduser().resolve() if opts.db else default_cache_path(ds.name, key)
    side = _sidecar(db)
    if db.exists() and not opts.rebuild:
        meta = None
        if side.exists():
            try:
                meta = json.loads(side.read_text())
            except (OSError, ValueError):
                meta = None
        if meta is None:
            raise UserError(f"{db} exists but was not made by `desktop-memory bench`; pass --rebuild to replace "
                            "it, or choose another --db path.")
        if meta.get("key") == key and meta.get("status") == "complete":
            figures = dict(meta["index"])
            figures["cached"] = True
            log(f"reusing the cached index {db} (built {figures.get('built_at', '?')})")
            return db, figures
        if meta.get("key") != key and opts.db:
            log(f"{db} was built from other data/settings: rebuilding it")
    return db, build_index(ds, db, settings, embedder, key, log, opts.doc_format, baseline=opts.baseline)


# ---------------------------------------------------------------- searching


def run_backend(svc: MemoryService, ds: BeirDataset, backend: str, opts: BenchOptions, chunk_depth: int, app_top_k: int,
                log: Callable[[str], None], nonsense: list[str] | None = None) -> dict[str, Any]:
    nonsense = nonsense or []
    queries = list(ds.queries.items())
    notes: set[str] = set()
    result: dict[str, Any] = {"queries": len(queries)}
    with RssSampler(interval_s=0.05) as rss:
        # First query: warms caches, loads the model, builds rank-bm25's in-memory index (timed on its own).
        t0 = time.perf_counter()
        svc.search_outcome(queries[0][1], backend=backend, top_k=app_top_k)
        result["first_query_ms"] = (time.perf_counter() - t0) * 1000
        rankings: dict[str, list[str]] = {}
        empty = 0
        for qid, text in queries:
            out = svc.search_outcome(text, backend=backend, top_k=chunk_depth)
            notes.update(out.notes)
            docs: list[str] = []
            seen: set[str] = set()
            for r in out.results:
                did = doc_id_from_path(r.source)
                if did not in seen:
                    seen.add(did)
                    docs.append(did)
                    if len(docs) >= opts.depth:
                        break
            empty += not docs
            rankings[qid] = docs
        walls: list[float] = []
        parts: list[dict[str, float]] = []
        shown: dict[str, list[str]] = {}  # the app's top_k passages, as documents
        by_file: dict[str, list[str]] = {}  # the first screen: SearchOutcome.files (one row per file)
        relevant_top3 = relevant_top3_strong = 0
        for rep in range(max(1, opts.repeat)):
            for qid, text in queries:
                t0 = time.perf_counter()
                out = svc.search_outcome(text, backend=backend, top_k=app_top_k)
                walls.append((time.perf_counter() - t0) * 1000)
                parts.append(out.timings_ms)
                if rep == 0:
                    shown[qid] = list(dict.fromkeys(doc_id_from_path(r.source) for r in out.results))
                    by_file[qid] = list(dict.fromkeys(doc_id_from_path(r.source) for r in out.files))
                    for r in out.results[:3]:
                        if ds.qrels.get(qid, {}).get(doc_id_from_path(r.source), 0) > 0:
                            relevant_top3 += 1
                            relevant_top3_strong += r.strength == "strong"
        nonsense_weak = 0
        for text in nonsense:
            nonsense_weak += svc.search_outcome(text, backend=backend, top_k=app_top_k).weak
    means, per_query = evaluate(ds.qrels, rankings)
    result.update(means)
    app_means, _ = evaluate(ds.qrels, shown)
    result["ndcg@10_at_app_top_k"] = app_means["ndcg@10"]
    result["ndcg@10_by_file"] = evaluate(ds.qrels, by_file)[0]["ndcg@10"]
    result["relevant_top3"] = relevant_top3
    result["relevant_top3_strong_share"] = relevant_top3_strong / relevant_top3 if relevant_top3 else float("nan")
    result["nonsense_queries"] = len(nonsense)
    result["nonsense_weak_share"] = nonsense_weak / len(nonsense) if nonsense else float("nan")
    result.update({
        "p50_ms": percentile(walls, 50),
        "p95_ms": percentile(walls, 95),
        "mean_ms": float(np.mean(walls)) if walls else float("nan"),
        "timings_ms": summarise(collect(parts)),
        "latency_top_k": app_top_k,
        "quality_chunk_depth": chunk_depth,
        "empty_results": empty,
        "notes": sorted(notes),
        "rss_peak_mb": rss.peak / MB,
        "rss_growth_mb": rss.growth / MB,
    })
    log(f"  {backend}: nDCG@10 {result['ndcg@10']:.4f} R@100 {result['recall@100']:.4f} "
        f"MRR@10 {result['mrr@10']:.4f} p50 {result['p50_ms']:.1f} ms p95 {result['p95_ms']:.1f} ms · "
        f"by file {result['ndcg@10_by_file']:.4f} · relevant top-3 strong {result['relevant_top3_strong_share']:.3f} "
        f"· nonsense weak {result['nonsense_weak_share']:.3f}")
    result["_per_query"] = per_query
    return result


def run_dataset(opts: BenchOptions) -> dict[str, Any]:
    from desktop_memory.service import MemoryService

    log = opts.log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    for b in opts.backends:
        if b not in BACKENDS:
            raise UserError(f"Unknown backend {b!r}; choose from {', '.join(BACKENDS)}.")
    ds = load_beir(opts.dataset, opts.split)
    ds.limit_queries(opts.limit_queries)
    if not ds.queries:
        raise UserError(f"{opts.dataset} has no judged queries in the {opts.split} split.")
    settings = bench_settings(opts)
    embedder = make_embedder(settings.embedder)
    report: dict[str, Any] = {
        "dataset": {"name": ds.name, "path": str(ds.root), "split": ds.split, "documents": len(ds.corpus),
                    "queries": len(ds.queries), "judgments": sum(len(r) for r in ds.qrels.values()),
                    "notes": ds.notes},
        "machine": machine_info(),
        "model": embedder.model_id,
        "settings": {"search": dataclasses.asdict(settings.search), "chunking": dataclasses.asdict(settings.chunking),
                     "embedder": {"max_tokens": settings.embedder.max_tokens,
                                  "batch_size": settings.embedder.batch_size}},
    }
    db, index = open_or_build(ds, opts, settings, embedder, log)
    report["db"] = str(db)
    report["index"] = index
    app_top_k = int(opts.top_k or settings.search.top_k)
    ratio = index.get("chunks_per_doc") or 1.0
    chunk_depth = min(4096 // max(1, settings.search.overfetch), max(opts.depth, math.ceil(opts.depth * ratio * 2)))
    svc = MemoryService(settings, db_path=db, embedder=embedder)
    vocabulary = corpus_vocabulary([f"{title} {text}" for title, text in ds.corpus.values()])
    nonsense = nonsense_queries(vocabulary, opts.nonsense, seed=0)
    report["nonsense_queries"] = len(nonsense)
    backends: dict[str, Any] = {}
    per_query: dict[str, Any] = {}
    try:
        for backend in opts.backends:
            log(f"searching {len(ds.queries)} queries with {backend} …")
            res = run_backend(svc, ds, backend, opts, chunk_depth, app_top_k, log, nonsense)
            per_query[backend] = res.pop("_per_query")
            backends[backend] = res
        report["search_peak_rss_mb"] = max(b["rss_peak_mb"] for b in backends.values())
        with svc.reading() as store:
            report["db_bytes"] = store.db_bytes()
    finally:
        svc.close()
    report["backends"] = backends
    report["peak_rss_mb"] = process_peak_rss() / MB
    report["machine"]["load_avg_end"] = load_average()
    report["_per_query"] = per_query
    return report
