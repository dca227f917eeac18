"""The naive-batching embedding baseline, run in a fresh process.

Naive = texts in input order, batches of ``batch_size`` rows, every row padded to ``max_tokens``; the app's way
(length-sorted, dynamically padded, token-budgeted batches) is timed on the same sample in the same process.
It runs apart from the benchmark because a 32 × 256-token batch grows onnxruntime's memory arena to ~1 GB and
the arena never shrinks: run in-process, it would inflate every RSS figure measured after it.

    python -m desktop_memory.bench.naive_baseline SETTINGS.json TEXTS.json   # prints one JSON object
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any


def run_in_child(settings: Any, texts: list[str], timeout_s: float = 1800) -> dict[str, float] | None:
    """Measure the baseline in a child process; None for embedders without an ONNX session or on failure."""
    with tempfile.TemporaryDirectory(prefix="dm-naive-") as tmp:
        sfile, tfile = Path(tmp) / "settings.json", Path(tmp) / "texts.json"
        sfile.write_text(json.dumps(settings.to_dict()), encoding="utf-8")
        tfile.write_text(json.dumps(texts), encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "desktop_memory.bench.naive_baseline", str(sfile), str(tfile)],
                              capture_output=True, text=True, timeout=timeout_s)
    if done.returncode != 0 or not done.stdout.strip():
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    from ..config import Settings
    from ..embed import make_embedder
    from .runner import naive_fixed_padding_tokens_per_s

    sfile, tfile = (argv if argv is not None else sys.argv[1:])[:2]
    settings = Settings.from_dict(json.loads(Path(sfile).read_text(encoding="utf-8")))
    texts = [str(t) for t in json.loads(Path(tfile).read_text(encoding="utf-8"))]
    embedder = make_embedder(settings.embedder)
    if hasattr(embedder, "load"):
        embedder.load()
    embedder.embed_documents(texts[:2])  # warm-up, as the indexer is warm by the time it batches
    print(json.dumps(naive_fixed_padding_tokens_per_s(embedder, texts)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
