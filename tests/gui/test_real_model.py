"""One end-to-end run with the real bundled embedding model (MiniLM int8 via onnxruntime)."""

from __future__ import annotations

import pytest

from .helpers import drop, search, wait_job

pytestmark = pytest.mark.slow


def test_real_local_model_hybrid_search(qtbot, make_window, docs_dir):
    from desktop_memory.gui.main_window import default_service_factory

    w = make_window(default_service_factory)  # exactly what the app uses: MemoryService(settings)
    assert w.embedder_state == "ready", w.status.embedder.text()
    assert "Embedder: ready" in w.status.embedder.text()
    drop(w, [docs_dir / "async.md", docs_dir / "benchmarks.md", docs_dir / "environment-variables.md"])
    summary = wait_job(qtbot, w, timeout=180000)
    assert summary.indexed == 3 and not summary.embed_error, summary
    qtbot.waitUntil(lambda: w.stats is not None and w.stats.vectors > 0 and not w.stats.pending_vectors,
                    timeout=30000)
    assert "semantic: all chunks embedded" in w.status.semantic.text()
    search(qtbot, w, "run many tasks at the same time without waiting", timeout=60000)
    results = w.results_model.results()
    assert results
    assert any("dense" in r.lanes for r in results), [r.explain() for r in results]
    assert any("semantic #" in r.explain() and "cos " in r.explain() for r in results)
