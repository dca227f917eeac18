"""Timing and memory helpers: percentiles, a peak-RSS sampler, process-wide peak RSS."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np


def percentile(values: Sequence[float], p: float) -> float:
    if not len(values):
        return float("nan")
    return float(np.percentile(np.asarray(values, dtype=np.float64), p))


def summarise(samples: Mapping[str, Sequence[float]]) -> dict[str, dict[str, float]]:
    """{part: {p50, p95, mean, n}} for every timed part (e.g. embed, fts, dense, fuse, fetch, total)."""
    out: dict[str, dict[str, float]] = {}
    for part, timed in samples.items():
        vals = list(timed)
        if vals:
            out[part] = {"p50": percentile(vals, 50), "p95": percentile(vals, 95),
                         "mean": float(np.mean(vals)), "n": len(vals)}
    return out


def collect(timings: Iterable[Mapping[str, float]]) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {}
    for t in timings:
        for part, ms in t.items():
            samples.setdefault(part, []).append(float(ms))
    return samples


def time_searches(svc: Any, queries: Sequence[str], backend: str) -> dict[str, Any]:
    """p50/p95 wall time of ``svc.search_outcome`` over ``queries`` (after one warm call) and the searcher's own
    split of each part (``SearchOutcome.timings_ms``), summarised: what the scale tables print per backend."""
    svc.search_outcome(queries[0], backend=backend)  # warm
    walls, parts = [], []
    for q in queries:
        t0 = time.perf_counter()
        out = svc.search_outcome(q, backend=backend)
        walls.append((time.perf_counter() - t0) * 1000)
        parts.append(out.timings_ms)
    return {"p50_ms": percentile(walls, 50), "p95_ms": percentile(walls, 95), "timings_ms": summarise(collect(parts))}


def rss_bytes() -> int:
    try:
        import psutil

        return int(psutil.Process().memory_info().rss)
    except Exception:  # psutil missing or restricted: fall back to the lifetime peak
        return process_peak_rss()


def process_peak_rss() -> int:
    """The process's peak RSS so far (lifetime high-water mark), in bytes.

    Linux: ``VmHWM`` from /proc/self/status, not ``ru_maxrss``: the kernel carries the parent's high-water mark
    across fork + exec into ``ru_maxrss``, so a small child of a big benchmark process would report the parent's
    size (the app probe under ``bench --scale`` read 671 MB that way; its own peak was ~350 MB)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    if sys.platform == "win32":  # no resource module
        try:
            import psutil

            return int(getattr(psutil.Process().memory_info(), "peak_wset", 0))
        except Exception:
            return 0
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if os.uname().sysname == "Darwin" else int(peak) * 1024


class RssSampler:
    """Samples RSS on a background thread while a block runs: ``with RssSampler() as s: ...; s.peak``."""

    def __init__(self, interval_s: float = 0.02) -> None:
        self.interval_s = interval_s
        self.start = 0
        self.peak = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> RssSampler:
        self.start = self.peak = rss_bytes()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.peak = max(self.peak, rss_bytes())

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.peak = max(self.peak, rss_bytes())

    @property
    def growth(self) -> int:
        return max(0, self.peak - self.start)


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None
