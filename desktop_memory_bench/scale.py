"""Scale mode: how store and query costs grow with the number of chunks, without re-embedding text.

The dataset's cached index (built through the real pipeline on first use) supplies real chunk texts and their
real vectors. Synthetic chunk *i* recombines base chunk ``a = i mod B`` with a random partner ``b``:
its text is the first ``w`` share of ``a``'s words followed by the last ``1 - w`` share of ``b``'s, and its vector is
``normalise(w·v_a + (1-w)·v_b + ε)`` with ``w ~ U(0.55, 0.9)`` and ``ε ~ N(0, 0.02²)`` per component. So term
frequencies, document frequencies and vector neighbourhoods look like the real corpus, scaled up, instead of
like random noise or exact copies.

Chunks are written through the store's real write path (``write_documents``, as the pipeline's write step:
documents of 10 chunks, chunk rows + FTS rows, WRITE_BATCH_CHUNKS chunks to a transaction), then vectors
through ``store_vectors`` in the pipeline's window of 256 —
the app's path minus the model. Queries go through ``MemoryService.search_outcome`` with the real query embedder.
The dense lane's top-10 is checked against an exact brute-force top-10 (numpy over every stored vector).
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from desktop_memory.embed import make_embedder
from desktop_memory.errors import UserError
from desktop_memory.ingest.pipeline import WRITE_BATCH_CHUNKS
from desktop_memory.models import ChunkDraft, Location
from desktop_memory.store.doc_writes import DocumentWrite
from desktop_memory.store.sql_values import as_int, as_str, scalar_int

from .bulk import bulk_write
from .dataset import load_beir
from .latency import RssSampler, load_average, percentile, process_peak_rss, time_searches
from .runner import MB, BenchOptions, bench_settings, machine_info, open_or_build

if TYPE_CHECKING:
    from desktop_memory.store import Store
    from desktop_memory.store.protocol import LibraryStore

CHUNKS_PER_DOC = 10
VECTOR_WINDOW = 256  # the pipeline's EMBED_WINDOW
SCALE_BACKENDS = ("hybrid", "keyword", "dense")
EXACT_TIMED_QUERIES = 30  # the exact dense plan is slow at scale: time it on a sample
PROBE_DOCS = 200  # real documents the app probe indexes into each step's library (see app_probe.py)


class Synthesiser:
    def __init__(self, texts: list[str], vectors: np.ndarray, seed: int = 0) -> None:
        if not texts or len(texts) != len(vectors):
            raise UserError("the base index has no embedded chunks to synthesise from")
        self.words = [t.split() for t in texts]
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.rng = np.random.default_rng(seed)
        self.counter = 0

    def batch(self, n: int) -> tuple[list[str], np.ndarray]:
        base = len(self.words)
        a = (np.arange(self.counter, self.counter + n) % base).astype(np.int64)
        self.counter += n
        b = self.rng.integers(0, base, size=n)
        w = self.rng.uniform(0.55, 0.9, size=n).astype(np.float32)
        vec: np.ndarray = w[:, None] * self.vectors[a] + (1 - w)[:, None] * self.vectors[b]
        vec += self.rng.normal(0.0, 0.02, size=vec.shape).astype(np.float32)
        vec /= np.linalg.norm(vec, axis=1, keepdims=True)
        texts = []
        for ai, bi, wi in zip(a, b, w):
            wa, wb = self.words[ai], self.words[bi]
            texts.append(" ".join(wa[: max(1, int(len(wa) * wi))] + wb[int(len(wb) * wi):]))
        return texts, vec.astype(np.float32)


def exact_topk(store: LibraryStore, queries: np.ndarray, k: int, block: int = 20000) -> list[list[int]]:
    """Brute-force cosine top-k over every stored vector (streamed, so memory stays flat)."""
    best_ids = np.full((len(queries), 0), -1, dtype=np.int64)
    best_sc = np.full((len(queries), 0), -np.inf, dtype=np.float32)
    for ids, mat in store.iter_vectors(block):
        sc = queries @ mat.T
        all_sc = np.concatenate([best_sc, sc], axis=1)
        all_ids = np.concatenate([best_ids, np.broadcast_to(ids, sc.shape)], axis=1)
        kk = min(k, all_sc.shape[1])
        part = np.argpartition(-all_sc, kk - 1, axis=1)[:, :kk]
        best_sc = np.take_along_axis(all_sc, part, axis=1)
        best_ids = np.take_along_axis(all_ids, part, axis=1)
    out = []
    for row_ids, row_sc in zip(best_ids, best_sc):
        order = np.lexsort((row_ids, -row_sc))
        out.append([int(i) for i in row_ids[order]])
    return out


def grow(store: Store, synth: Synthesiser, target: int, model_id: str, dim: int,
         log: Callable[[str], None], folder_docs: int = 1000,
         write_batch: int = WRITE_BATCH_CHUNKS) -> dict[str, float]:
    """Add canonical chunks until the store holds ``target``; returns insert timings. Documents are
    ``/synthetic/<folder>/<n>.txt``, ``folder_docs`` to a folder."""
    have = store.pending_count() + store.counts()["vectors"]
    need = target - have
    if need <= 0:
        return {"added": 0, "text_s": 0.0, "vector_s": 0.0, "text_cpu_s": 0.0, "vector_cpu_s": 0.0}
    store.ensure_model(model_id, dim)
    doc_no = scalar_int(store.conn, "select count(*) from documents")
    text_s = vector_s = text_cpu = vector_cpu = 0.0  # wall and this process's CPU (a shared machine: see both)
    added = 0
    block = 20000
    last = time.perf_counter()
    while added < need:
        n = min(block, need - added)
        texts, vecs = synth.batch(n)
        first = scalar_int(store.conn, "select coalesce(max(id), 0) from chunks")  # vectors for this batch only
        t0, c0 = time.perf_counter(), time.process_time()
        docs: list[DocumentWrite] = []
        pending = 0
        for start in range(0, n, CHUNKS_PER_DOC):
            part = texts[start : start + CHUNKS_PER_DOC]
            drafts, pos = [], 0
            for t in part:
                drafts.append(ChunkDraft(t, Location(char_start=pos, char_end=pos + len(t))))
                pos += len(t) + 2
            doc_no += 1
            path = f"/synthetic/{doc_no // folder_docs:04d}/{doc_no:07d}.txt"
            docs.append(DocumentWrite(path=path, kind="text", language=None, title=None, size=pos, mtime=0.0,
                                      content_hash=str(doc_no), chunks=drafts,
                                      dedupe_keys=[f"{doc_no}:{i}" for i in range(len(drafts))]))
            pending += len(drafts)
            if pending >= write_batch:  # the pipeline's batch (ingest/write_batch.py), by chunk count
                store.write_documents(docs)
                docs, pending = [], 0
        store.write_documents(docs)
        text_s += time.perf_counter() - t0
        text_cpu += time.process_time() - c0
        # Vectors the way embed_queue stores them: windows of pending chunks, one transaction each.
        t0, c0 = time.perf_counter(), time.process_time()
        offset = 0
        after = first
        while True:
            batch = store.pending_chunks(VECTOR_WINDOW, after_id=after)
            if not batch:
                break
            ids = [cid for cid, _ in batch]
            after = ids[-1]
            store.store_vectors(ids, vecs[offset : offset + len(ids)])
            offset += len(ids)
        vector_s += time.perf_counter() - t0
        vector_cpu += time.process_time() - c0
        added += n
        if time.perf_counter() - last > 20:
            last = time.perf_counter()
            log(f"  {have + added:,} chunks written")
    return {"added": added, "text_s": text_s, "vector_s": vector_s, "text_cpu_s": text_cpu, "vector_cpu_s": vector_cpu}


def app_probe_step(db: Path, ds: Any, queries: list[str], settings: Any, *, offset: int,
                   log: Callable[[str], None]) -> dict[str, Any] | None:
    """Run ``app_probe`` in a fresh process on this step's library: index PROBE_DOCS new real documents, then
    search every query on each backend. Its peak RSS is the app's, free of the harness's own memory."""
    from .child import json_files, run_module
    from .dataset import materialise

    ids = list(ds.corpus)[offset : offset + PROBE_DOCS]
    with tempfile.TemporaryDirectory(prefix="dm-probe-") as tmp, \
            json_files(queries=queries, settings=settings.to_dict()) as f:
        docs = Path(tmp) / f"probe-{offset}"
        materialise({i: ds.corpus[i] for i in ids}, docs)
        log(f"  app probe: a fresh process indexes {len(ids)} documents into it and runs "
            f"{len(queries)} queries × 3 backends …")
        out, err = run_module("desktop_memory_bench.app_probe", ["--db", str(db), "--docs", str(docs), "--queries",
                              str(f["queries"]), "--settings", str(f["settings"])], timeout_s=3600)
    if out is None:
        log(f"  app probe failed: {err.strip()[-500:]}")
    return out


@dataclasses.dataclass
class SynthesisBase:
    """The real corpus a synthetic library is grown from: its cached index (built through the real pipeline on first
    use), the app's settings and embedder for it, and the synthesiser over its chunk texts and vectors."""

    db: Path
    settings: Any
    embedder: Any
    synth: Synthesiser
    model_id: str
    dim: int

    @classmethod
    def load(cls, ds: Any, opts: BenchOptions, log: Callable[[str], None]) -> SynthesisBase:
        from desktop_memory.store import Store

        settings = bench_settings(opts)
        embedder = make_embedder(settings.embedder)
        base_db, _ = open_or_build(ds, opts, settings, embedder, log)
        base = Store(base_db)
        try:
            ids_texts = [(as_int(cid), as_str(text)) for cid, text in base.conn.execute(
                "select id, text from chunks where embedded = 1 order by id"
            )]
            vec_by_id = {}
            for ids, mat in base.iter_vectors(20000):
                for i, cid in enumerate(ids):
                    vec_by_id[int(cid)] = mat[i]
            model_id, dim = base.model_info()
        finally:
            base.close()
        if model_id is None or not dim:
            raise UserError(f"the base index {base_db} records no embedding model: rebuild it with --rebuild")
        texts = [t for cid, t in ids_texts if cid in vec_by_id]
        vectors = np.stack([vec_by_id[cid] for cid, _ in ids_texts if cid in vec_by_id])
        return cls(base_db, settings, embedder, Synthesiser(texts, vectors), model_id, dim)


def run_scale(opts: BenchOptions, sizes: list[int], *, n_queries: int = 200,
              scale_db: Path | None = None, postgres: str | None = None, app_probe: bool = True) -> dict[str, Any]:
    """Each size on the SQLite library (and, with ``postgres``, the same library copied into that database,
    measured with the same queries: postgres_side.scale_step)."""
    from desktop_memory.retrieve.lanes import dense_lane, dense_lane_exact
    from desktop_memory.service import MemoryService

    log = opts.log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    ds = load_beir(opts.dataset, opts.split)
    ds.limit_queries(n_queries)
    base = SynthesisBase.load(ds, opts, log)
    settings, embedder, synth, model_id, dim, base_db = (base.settings, base.embedder, base.synth, base.model_id,
                                                         base.dim, base.db)
    embedder.load()
    queries = list(ds.queries.values())
    qvecs = np.stack([embedder.embed_query(q) for q in queries]).astype(np.float32)

    tmp = None
    if scale_db is None:
        tmp = tempfile.TemporaryDirectory(prefix="dm-scale-")
        db = Path(tmp.name) / "scale.db"
    else:
        db = scale_db.expanduser()  # an existing one (an earlier --scale run's) is grown from where it is
    report: dict[str, Any] = {
        "mode": "scale",
        "base": {"name": ds.name, "chunks": len(synth.words), "db": str(base_db), "model": model_id},
        "queries": len(queries),
        "machine": machine_info(),
        "settings": {"search": dataclasses.asdict(settings.search)},
        "synthesis": {"chunks_per_doc": CHUNKS_PER_DOC, "mix_weight": [0.55, 0.9], "noise_sd": 0.02},
        "steps": [],
    }
    t_all = time.perf_counter()
    svc = MemoryService(settings, db_path=db, embedder=embedder)
    try:
        def grow_and_measure(store: Store) -> None:  # a single-threaded benchmark: it holds the writer throughout
            for target in sizes:
                log(f"growing the synthetic index to {target:,} chunks …")
                with RssSampler() as rss:
                    ins = grow(store, synth, target, model_id, dim, log)
                    store.conn.execute("pragma wal_checkpoint(TRUNCATE)")
                    counts = store.counts()
                    step: dict[str, Any] = {
                        "chunks": counts["chunks"],
                        "vectors": counts["vectors"],
                        "added": ins["added"],
                        "insert_text_s": ins["text_s"],
                        "insert_vector_s": ins["vector_s"],
                        "insert_text_chunks_per_s": ins["added"] / ins["text_s"] if ins["text_s"] else None,
                        "insert_vector_chunks_per_s": ins["added"] / ins["vector_s"] if ins["vector_s"] else None,
                        "insert_chunks_per_s": (ins["added"] / (ins["text_s"] + ins["vector_s"])
                                                if ins["added"] else None),
                        # this process's CPU for the same work: the wall rate on a shared machine is mostly waiting
                        "insert_text_cpu_s": ins["text_cpu_s"],
                        "insert_vector_cpu_s": ins["vector_cpu_s"],
                        "insert_chunks_per_cpu_s": (ins["added"] / (ins["text_cpu_s"] + ins["vector_cpu_s"])
                                                    if ins["added"] else None),
                        "db_bytes": store.db_bytes(),
                    }
                    step["db_mb"] = step["db_bytes"] / MB
                    step["bytes_per_chunk"] = step["db_bytes"] / max(1, counts["chunks"])
                    log(f"  timing {len(queries)} queries per backend …")
                    step["latency"] = {}
                    for backend in SCALE_BACKENDS:
                        step["latency"][backend] = time_searches(svc, queries, backend)
                    # The dense plan against exact search, on the same query vectors.
                    fast = [[cid for cid, _ in dense_lane(store, q, 10, codes=svc.search_state.codes)]
                            for q in qvecs]
                    exact_ms = []
                    for q in qvecs[:EXACT_TIMED_QUERIES]:
                        t0 = time.perf_counter()
                        dense_lane_exact(store, q, 10)
                        exact_ms.append((time.perf_counter() - t0) * 1000)
                    step["exact_dense_p50_ms"] = percentile(exact_ms, 50)
                    step["exact_dense_p95_ms"] = percentile(exact_ms, 95)
                truth = exact_topk(store, qvecs, 10)
                step["dense_recall@10"] = float(np.mean([len(set(f) & set(t)) / max(1, len(t))
                                                         for f, t in zip(fast, truth)]))
                step["peak_rss_mb"] = rss.peak / MB
                step["load_avg"] = load_average()
                step["app"] = app_probe_step(db, ds, queries, settings, offset=len(report["steps"]) * PROBE_DOCS,
                                             log=log) if app_probe else None
                if postgres is not None:
                    from .postgres_side import scale_step

                    step["postgres"] = scale_step(db, postgres, queries, qvecs, settings, embedder, SCALE_BACKENDS,
                                                  log)
                lat = step["latency"]
                log(f"  {step['chunks']:,} chunks: hybrid p50 {lat['hybrid']['p50_ms']:.1f} ms, keyword p50 "
                    f"{lat['keyword']['p50_ms']:.1f} ms, dense p50 {lat['dense']['p50_ms']:.1f} ms, recall@10 "
                    f"{step['dense_recall@10']:.4f}, RSS {step['peak_rss_mb']:.0f} MB, db {step['db_mb']:.0f} MB")
                report["steps"].append(step)
            problems = store.check_integrity() if sizes and sizes[-1] <= 20000 else None
            if problems is not None:
                report["integrity_problems"] = problems

        bulk_write(svc, grow_and_measure)  # (the one named operation that holds the writer: bulk.py)
    finally:
        svc.close()
        if tmp is not None:
            tmp.cleanup()
    report["elapsed_s"] = time.perf_counter() - t_all
    report["peak_rss_mb"] = process_peak_rss() / MB
    report["machine"]["load_avg_end"] = load_average()
    return report
