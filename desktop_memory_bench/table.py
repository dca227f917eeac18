"""Plain-text tables for the bench report (the JSON carries every figure; the table the headline ones)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def _fmt(value: Any, spec: str = ".1f") -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        return format(value, spec)
    return str(value)


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(headers, widths)))]
    lines.append("  ".join("-" * w for w in widths))
    for r in rows:
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
    return "\n".join(lines)


def _pct(share: Any) -> str:
    return _fmt(100 * share, ".1f") + " %" if isinstance(share, float) and not math.isnan(share) else "-"


LANE_PARTS = ("embed", "fts", "dense", "bm25", "fuse", "fetch")


def format_index(ix: dict[str, Any]) -> str:
    cached = " (cached index: figures from the run that built it)" if ix.get("cached") else ""
    lines = [
        f"index{cached}: {ix['documents']} docs → {ix['chunks']} chunks, {ix['tokens']:,} model tokens, "
        f"db {ix['db_mb']:.1f} MB, peak RSS {ix['peak_rss_mb']:.0f} MB",
        f"  time {ix['total_s']:.1f} s = extract/chunk {ix['extract_chunk_s']:.1f} s + embed {ix['embed_s']:.1f} s "
        f"+ store {ix['store_s']:.1f} s + other {ix['other_s']:.1f} s  (not embedding: "
        f"{100 * ix['non_embed_share']:.1f} %)",
        f"  throughput {ix['docs_per_s']:.1f} docs/s · {ix['chunks_per_s']:.1f} chunks/s · "
        f"{ix['tokens_per_s']:,.0f} tokens/s overall; embedding {ix['embed_chunks_per_s']:.1f} chunks/s · "
        f"{ix['embed_tokens_per_s']:,.0f} tokens/s",
        f"  keyword-searchable after {ix['keyword_searchable_s']:.1f} s · fully embedded after "
        f"{ix['fully_embedded_s']:.1f} s (model load {ix['model_load_s']:.1f} s, not included)",
    ]
    b = ix.get("baseline")
    if b:
        lines.append(
            f"  embedding vs naive fixed padding ({b['sample_chunks']} chunks): {b['app_tokens_per_s']:,.0f} vs "
            f"{b['naive_fixed_padding_tokens_per_s']:,.0f} tokens/s ({b['speedup']:.2f}×)"
        )
    return "\n".join(lines)


def format_backends(backends: dict[str, dict[str, Any]]) -> str:
    # the rerank stage's column only when it ran (`--rerank-url`): the usual table keeps its shape
    parts = LANE_PARTS + (("rerank",) if any("rerank" in b.get("timings_ms", {}) for b in backends.values()) else ())
    headers = ["backend", "nDCG@10", "R@100", "MRR@10", "p50 ms", "p95 ms"] + [f"{p} p50" for p in parts] + [
        "RSS MB", "by-file nDCG@10", "rel top-3 strong", "nonsense weak"]
    rows = []
    for name, b in backends.items():
        t = b.get("timings_ms", {})
        rows.append(
            [name, _fmt(b["ndcg@10"], ".4f"), _fmt(b["recall@100"], ".4f"), _fmt(b["mrr@10"], ".4f"),
             _fmt(b["p50_ms"]), _fmt(b["p95_ms"])]
            + [_fmt(t[p]["p50"], ".2f") if p in t else "-" for p in parts]
            + [_fmt(b.get("rss_peak_mb"), ".0f"), _fmt(b.get("ndcg@10_by_file"), ".4f"),
               _pct(b.get("relevant_top3_strong_share")), _pct(b.get("nonsense_weak_share"))]
        )
    return render_table(headers, rows)


def format_report(report: dict[str, Any]) -> str:
    ds = report["dataset"]
    out = [
        f"desktop-memory bench · {ds['name']} ({ds['split']}, {ds['queries']} queries, {ds['documents']} docs) · "
        f"model {report['model']} · {report['machine']['cpus']} CPUs",
        format_index(report["index"]),
        "",
        format_backends(report["backends"]),
        "",
        f"latency at top_k={next(iter(report['backends'].values()))['latency_top_k']} (per-part columns are p50 ms); "
        f"quality from a ranking of 100 documents per query · peak RSS {report['peak_rss_mb']:.0f} MB · "
        f"db {report['db_bytes'] / 1048576:.1f} MB",
        "by-file nDCG@10: the first screen (SearchOutcome.files, one row per file, top_k files); rel top-3 strong: "
        "share of relevant results in the top 3 called strong; nonsense weak: share of "
        f"{report.get('nonsense_queries', 0)} generated nonsense queries (word salad, letter strings) called weak",
    ]
    for name, b in report["backends"].items():
        for note in b.get("notes", []):
            out.append(f"note ({name}): {note}")
    return "\n".join(out)


def format_scale(report: dict[str, Any]) -> str:
    headers = ["chunks", "insert/s", "db MB", "hybrid p50", "p95", "keyword p50", "p95", "dense p50", "p95",
               "dense R@10", "exact p50", "RSS MB", "app RSS MB"]
    rows = []
    for step in report["steps"]:
        lat = step["latency"]
        rows.append([
            f"{step['chunks']:,}",
            _fmt(step["insert_chunks_per_s"], ".0f"),
            _fmt(step["db_mb"], ".0f"),
            _fmt(lat.get("hybrid", {}).get("p50_ms")), _fmt(lat.get("hybrid", {}).get("p95_ms")),
            _fmt(lat.get("keyword", {}).get("p50_ms")), _fmt(lat.get("keyword", {}).get("p95_ms")),
            _fmt(lat.get("dense", {}).get("p50_ms")), _fmt(lat.get("dense", {}).get("p95_ms")),
            _fmt(step.get("dense_recall@10"), ".4f"),
            _fmt(step.get("exact_dense_p50_ms")),
            _fmt(step["peak_rss_mb"], ".0f"),
            _fmt((step.get("app") or {}).get("peak_rss_mb"), ".0f"),
        ])
    pg_rows = []
    for step in report["steps"]:
        pg = step.get("postgres")
        if pg is None:
            continue
        lat, copy = pg["latency"], pg["copy"]
        pg_rows.append([
            f"{pg['chunks']:,}",
            "reused" if copy.get("reused") else _fmt(copy.get("passages_per_s"), ".0f"),
            "" if copy.get("reused") else _fmt(copy.get("rows_per_s"), ".0f"),
            _fmt(pg["db_mb"], ".0f"),
            *(_fmt(lat.get(b, {}).get(k)) for b in ("hybrid", "keyword", "dense") for k in ("p50_ms", "p95_ms")),
            _fmt(pg.get("dense_recall@10"), ".4f"),
            _fmt((lat.get("hybrid", {}).get("p50_ms") or 0) / max(1e-9, step["latency"]["hybrid"]["p50_ms"]), ".2f"),
            _fmt(pg.get("load_avg"), ".1f"),
        ])
    pg_text = "" if not pg_rows else (
        "\nthe same library on PostgreSQL (--postgres; copied in by `copy`, insert/s = its passages/s with vectors "
        "and indexes; rows/s = the passages with their statistics and vectors by COPY, the index build left out)\n"
        + render_table(["chunks", "insert/s", "rows/s", "db MB", "hybrid p50", "p95", "keyword p50", "p95",
                                          "dense p50", "p95", "dense R@10", "hybrid p50 / SQLite's", "load"], pg_rows))
    head = (f"desktop-memory bench --scale · base {report['base']['name']} ({report['base']['chunks']} real chunks) · "
            f"{report['queries']} queries · {report['machine']['cpus']} CPUs")
    foot = ("RSS MB: the benchmark process (base corpus, synthesiser and exact reference included); app RSS MB: a "
            "fresh app process that indexes 200 new documents into that library and runs every query on hybrid, "
            "keyword and dense (bench/app_probe.py)")
    return head + "\n" + render_table(headers, rows) + "\n" + foot + pg_text
