"""The naive-batching embedding baseline, run in a fresh process.

Naive = texts in input order, batches of ``batch_size`` rows, every row padded to ``max_tokens``; the app's way
(length-sorted, dynamically padded, token-budgeted batches) is timed on the same sample in the same process.
It runs apart from the benchmark because a 32 × 256-token batch grows onnxruntime's memory arena to ~1 GB and
the arena never shrinks: run in-process, it would inflate every RSS figure measured after it.

    python -m desktop_memory_bench.naive_baseline SETTINGS.json TEXTS.json   # prints one JSON object
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .child import json_files, run_module


def run_in_child(settings: Any, texts: list[str], timeout_s: float = 1800) -> dict[str, float] | None:
    """Measure the baseline in a child process; None for embedders without an ONNX session or on failure."""
    with json_files(settings=settings.to_dict(), texts=texts) as f:
        out, _ = run_module("desktop_memory_bench.naive_baseline", [str(f["settings"]), str(f["texts"])], timeout_s)
    return out


def main(argv: list[str] | None = None) -> int:
    from desktop_memory.embed import make_embedder
    from desktop_memory.settings_file import validate_settings

    from .runner import naive_fixed_padding_tokens_per_s

    sfile, tfile = (argv if argv is not None else sys.argv[1:])[:2]
    settings = validate_settings(json.loads(Path(sfile).read_text(encoding="utf-8")))
    texts = [str(t) for t in json.loads(Path(tfile).read_text(encoding="utf-8"))]
    embedder = make_embedder(settings.embedder)
    if hasattr(embedder, "load"):
        embedder.load()
    embedder.embed_documents(texts[:2])  # warm-up, as the indexer is warm by the time it batches
    print(json.dumps(naive_fixed_padding_tokens_per_s(embedder, texts)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
