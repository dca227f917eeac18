"""`--smoke`: prove an install (or a frozen bundle) works end to end, offline, in a temporary folder.

Checks, printing each: bundled SQLite opens a fresh store, sqlite-vec loads (version), the local model and its
tokenizer load and embed one sentence (dimension, unit norm), a tiny document indexes, one hybrid search finds it.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path


def _say(ok: bool, what: str) -> None:
    print(f"[{'ok' if ok else 'FAIL'}] {what}", flush=True)


def run_smoke(gui: bool = False) -> int:
    import numpy as np

    from . import __version__
    from .config import Settings
    from .embed import make_embedder
    from .service import MemoryService

    t0 = time.perf_counter()
    print(f"desktop-memory {__version__} smoke check (python {sys.version.split()[0]})")
    try:
        with tempfile.TemporaryDirectory(prefix="dm-smoke-") as tmp:
            settings = Settings()
            embedder = make_embedder(settings.embedder)
            svc = MemoryService(settings, db_path=Path(tmp) / "smoke.db", embedder=embedder)
            with svc.reading() as store:
                vec = store.sqlite_vec_version()
            _say(True, f"store opened at {svc.db_path} with sqlite-vec {vec}")
            embedder.load()
            v = embedder.embed_query("How do I make a query parameter optional?")
            norm = float(np.linalg.norm(v))
            ok = v.shape == (embedder.dim,) and abs(norm - 1.0) < 1e-3
            _say(ok, f"model {embedder.model_id} embedded one sentence: {embedder.dim}-d, norm {norm:.4f}")
            doc = Path(tmp) / "note.md"
            doc.write_text("# Notes\n\n## Optional parameters\n\nSet a default of None to make a query parameter "
                           "optional.\n", encoding="utf-8")
            summary = svc.index_paths([doc])
            _say(summary.indexed == 1 and summary.chunks_embedded >= 1,
                 f"indexed 1 document, {summary.chunks_embedded} chunk(s) embedded")
            results = svc.search_outcome("optional query parameter", backend="hybrid", top_k=3).results
            found = bool(results) and results[0].source == str(doc) and "dense" in results[0].lanes
            _say(found, f"hybrid search found it: {results[0].explain() if results else 'nothing'}")
            svc.close()
            if not (ok and found and summary.indexed == 1):
                return 1
    except Exception as exc:  # the smoke check reports, it never tracebacks at a user
        _say(False, f"{type(exc).__name__}: {exc}")
        return 1
    print(f"smoke check passed in {time.perf_counter() - t0:.1f}s")
    return 0
