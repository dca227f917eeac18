"""`desktop-memory bench` end to end on a tiny BEIR folder, and its metrics against ir-measures."""

from __future__ import annotations

import json
import math
from pathlib import Path

import ir_measures
import pytest

from desktop_memory.cli import main
from desktop_memory_bench.dataset import doc_filename, doc_id_from_path, load_beir
from desktop_memory_bench.metrics import evaluate
from tests.support.beir import DOCS, QUERIES, make_beir


@pytest.fixture()
def beir(tmp_path) -> Path:
    return make_beir(tmp_path / "tinybeir")


def _run_json(capsys, *argv: str) -> dict:
    assert main(["bench", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_bench_end_to_end_json(beir, tmp_path, capsys):
    db = tmp_path / "bench.db"
    report = _run_json(capsys, str(beir), "--embedder", "hash", "--db", str(db), "--no-baseline")
    assert set(report["backends"]) == {"hybrid", "keyword", "bm25", "dense"}
    for name, b in report["backends"].items():
        for key in ("ndcg@10", "recall@100", "mrr@10"):
            assert 0.0 <= b[key] <= 1.0, (name, key)
        assert 0.0 < b["p50_ms"] <= b["p95_ms"] < 5000
        assert b["queries"] == len(QUERIES)
        assert "total" in b["timings_ms"]
    assert report["backends"]["keyword"]["ndcg@10"] > 0.5  # the lexical lane finds these easily
    assert set(report["backends"]["hybrid"]["timings_ms"]) >= {"embed", "fts", "dense", "fuse", "fetch", "total"}
    ix = report["index"]
    assert ix["documents"] == len(DOCS) and ix["chunks"] >= len(DOCS) and ix["vectors"] == ix["canonical_chunks"]
    for key in ("extract_chunk_s", "embed_s", "store_s", "docs_per_s", "chunks_per_s", "tokens_per_s",
                "keyword_searchable_s", "fully_embedded_s", "db_bytes", "peak_rss_mb", "non_embed_share"):
        assert ix[key] is not None and ix[key] >= 0, key
    assert ix["keyword_searchable_s"] <= ix["fully_embedded_s"]
    assert report["peak_rss_mb"] > 10 and report["db_bytes"] > 0
    assert report["dataset"] == {**report["dataset"], "split": "test", "queries": 5, "documents": 6}
    assert ix["cached"] is False

    # Second run: the index is reused (no re-embedding), figures are the cached build's.
    again = _run_json(capsys, str(beir), "--embedder", "hash", "--db", str(db), "--backends", "keyword,dense",
                      "--split", "train", "--limit-queries", "1", "--top-k", "3")
    assert again["index"]["cached"] is True
    assert set(again["backends"]) == {"keyword", "dense"}
    assert again["dataset"]["queries"] == 1 and again["backends"]["keyword"]["latency_top_k"] == 3


def test_bench_table_output_and_default_cache(beir, capsys):
    assert main(["bench", str(beir), "--embedder", "hash", "--backends", "hybrid", "--no-baseline"]) == 0
    out = capsys.readouterr().out
    assert "nDCG@10" in out and "hybrid" in out and "keyword-searchable after" in out



def test_bench_max_tokens_override_is_part_of_the_index_key(beir, tmp_path, capsys):
    db = tmp_path / "short.db"
    report = _run_json(capsys, str(beir), "--embedder", "hash", "--db", str(db), "--no-baseline",
                       "--backends", "keyword", "--max-tokens", "32")
    assert report["settings"]["embedder"]["max_tokens"] == 32
    again = _run_json(capsys, str(beir), "--embedder", "hash", "--db", str(db), "--no-baseline",
                      "--backends", "keyword", "--max-tokens", "32")
    assert again["index"]["cached"] is True
    # the default truncation is another index: that database is rebuilt, not reused
    other = _run_json(capsys, str(beir), "--embedder", "hash", "--db", str(db), "--no-baseline",
                      "--backends", "keyword")
    assert other["index"]["cached"] is False and other["settings"]["embedder"]["max_tokens"] == 256
    assert main(["bench", str(beir), "--embedder", "hash", "--max-tokens", "4"]) == 1
    assert "--max-tokens" in capsys.readouterr().err


def test_bench_refuses_foreign_db(beir, tmp_path, capsys):
    foreign = tmp_path / "mine.db"
    foreign.write_bytes(b"")
    assert main(["bench", str(beir), "--embedder", "hash", "--db", str(foreign)]) == 1
    assert "--rebuild" in capsys.readouterr().err


def test_doc_ids_survive_file_names():
    for did in ("d/4", "d 5", "x%y", "..", "a=b", "ünï"):
        assert doc_id_from_path("/tmp/x/" + doc_filename(did)) == did
        assert "/" not in doc_filename(did)


def test_loader_splits_and_limits(beir):
    ds = load_beir(beir, "train")
    assert set(ds.queries) == {"q1", "q2"}  # only judged queries
    ds = load_beir(beir, "test")
    ds.limit_queries(2)
    assert list(ds.queries) == ["q1", "q2"] and set(ds.qrels) == {"q1", "q2"}
    assert ds.qrels["q2"] == {"d3": 2}


def test_metrics_agree_with_ir_measures_by_hand():
    qrels = {"a": {"d1": 1, "d3": 1}, "b": {"d9": 2, "d8": 1}, "c": {"d5": 1}}
    rankings = {"a": ["d2", "d1", "d3"], "b": ["d8", "d7", "d9"], "c": []}  # c: no results at all
    means, per_query = evaluate(qrels, rankings)
    # a: first hit at rank 2 -> RR 1/2; DCG = 1/log2(3) + 1/log2(4), IDCG = 1 + 1/log2(3)
    assert per_query["a"]["mrr@10"] == pytest.approx(0.5)
    assert per_query["a"]["ndcg@10"] == pytest.approx((1 / math.log2(3) + 0.5) / (1 + 1 / math.log2(3)))
    assert per_query["a"]["recall@100"] == 1.0
    # b: graded gains: DCG = 1 + 2/log2(4) = 2; IDCG = 2 + 1/log2(3)
    assert per_query["b"]["ndcg@10"] == pytest.approx(2 / (2 + 1 / math.log2(3)))
    # c returned nothing: it still counts, as zero
    assert per_query["c"] == {"ndcg@10": 0.0, "recall@100": 0.0, "mrr@10": 0.0}
    assert means["mrr@10"] == pytest.approx((0.5 + 1.0 + 0.0) / 3)
    # and the library itself agrees on the queries it scores
    run = {"a": {"d2": 3.0, "d1": 2.0, "d3": 1.0}, "b": {"d8": 3.0, "d7": 2.0, "d9": 1.0}}
    lib = {(m.query_id, str(m.measure)): m.value
           for m in ir_measures.iter_calc([ir_measures.nDCG @ 10, ir_measures.RR @ 10], qrels, run)}
    assert lib[("a", "nDCG@10")] == pytest.approx(per_query["a"]["ndcg@10"])
    assert lib[("b", "RR@10")] == pytest.approx(per_query["b"]["mrr@10"])


def test_scale_mode_small(beir, tmp_path, capsys):
    report = _run_json(capsys, str(beir), "--embedder", "hash", "--db", str(tmp_path / "base.db"),
                       "--no-baseline", "--scale", "300,900", "--scale-queries", "5")
    steps = report["steps"]
    assert [s["chunks"] for s in steps] == [300, 900]
    for s in steps:
        assert s["vectors"] == s["chunks"]
        assert s["dense_recall@10"] == pytest.approx(1.0)  # below the candidate budget the plan is exact
        for backend in ("hybrid", "keyword", "dense"):
            assert s["latency"][backend]["p50_ms"] > 0
        assert s["db_bytes"] > 0 and s["peak_rss_mb"] > 0 and s["insert_chunks_per_s"] > 0
    # the app probe (a fresh process) indexed real documents into the first step's library and searched it
    first = steps[0]["app"]
    assert first["indexed_files"] == len(DOCS) and first["chunks"] >= 300 + len(DOCS)
    assert first["searches"] == 3 * 5 and first["peak_rss_mb"] > 0
    assert steps[1]["app"]["chunks"] >= 900
    assert report.get("integrity_problems") == []


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="VmHWM is Linux's per-process high-water mark")
def test_peak_rss_of_a_child_process_is_its_own():
    """ru_maxrss carries a parent's high-water mark into a child across fork + exec; the bench's app probe is a
    child of a big benchmark process, so process_peak_rss must report the child's own peak."""
    import subprocess
    import sys

    ballast = bytearray(300 * 2**20)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    code = ("import resource; from desktop_memory_bench.latency import process_peak_rss as p; "
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, p())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    inherited, own = (int(x) for x in out.stdout.split())
    del ballast
    assert own < 150 * 2**20, (own, inherited)  # the child's own peak, whatever ru_maxrss inherited


def test_naive_baseline_runs_apart_with_the_real_model():
    """The naive fixed-padding baseline is timed in a child process (its 32 × 256 batches would grow this
    process's onnxruntime arena) against the app's batching, on the same texts."""
    from desktop_memory.config import Settings
    from desktop_memory_bench.naive_baseline import run_in_child

    texts = [f"{title}. {text}" for title, text in DOCS.values()] * 3
    out = run_in_child(Settings(), texts)
    assert out is not None
    assert out["sample_chunks"] == len(texts) and out["sample_tokens"] > len(texts)
    assert out["naive_fixed_padding_tokens_per_s"] > 0 and out["app_tokens_per_s"] > 0
    assert out["speedup"] == pytest.approx(out["app_tokens_per_s"] / out["naive_fixed_padding_tokens_per_s"])


def test_watch_stall_settings_are_built_not_mutated(tmp_path):
    """The watch-stall benchmark used to assign to the frozen Settings (FrozenInstanceError before any figure)."""
    from desktop_memory_bench.watch_stall import stall_settings

    settings = stall_settings(tmp_path / "bench.db", "hash")
    assert settings.db_path == str(tmp_path / "bench.db")
    assert settings.embedder.kind == "hash"


def test_bench_sizes_accept_suffixes():
    import argparse

    from desktop_memory_bench.command import _sizes

    assert _sizes("100k, 1_000,2m,100000") == [1000, 100_000, 2_000_000]
    with pytest.raises(argparse.ArgumentTypeError):
        _sizes("0")
