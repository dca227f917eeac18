"""Where the benchmarks find their data: the full evaluation set at ``../shared/eval`` beside the checkout.

The tests carry their own small copy (``tests/data/eval``); the benchmarks need the whole set (SciFact, Cranfield,
every PDF and office file, all Markdown docs) and say so plainly when it is not there, instead of failing on a
missing file.
"""

from __future__ import annotations

from pathlib import Path

SHARED_EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"


def missing_data(path: Path, what: str) -> str:
    """The message for a benchmark whose data is absent: what was looked for, where, and how to point elsewhere."""
    where = "the full evaluation set (../shared/eval beside the checkout" + (
        ", which is not there)" if not SHARED_EVAL.is_dir() else ")")
    return (f"benchmark data not found: {path} ({what}). The benchmarks read {where}; pass the path as an argument, "
            "or see docs/BENCHMARKS.md. The tests do not need it: they use tests/data/eval.")
