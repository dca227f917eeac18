"""`desktop-memory bench --embedder openai --embedder-url … --rerank-url …` on a tiny BEIR folder, against the
loopback server serving the bundled MiniLM: the same figures as the local model, and the rerank stage timed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_memory.cli import main
from desktop_memory.embed import LocalOnnxEmbedder
from tests.support.beir import make_beir
from tests.support.openai_server import MODEL, OpenAIStub


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(LocalOnnxEmbedder()) as s:
        yield s


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["bench", *argv, "--backends", "hybrid,dense", "--no-baseline", "--nonsense", "0", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_server_embedder_gives_the_local_models_figures(tmp_path: Path, stub: OpenAIStub,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    beir = make_beir(tmp_path / "tiny")
    local = run(capsys, str(beir), "--db", str(tmp_path / "local.db"))
    remote = run(capsys, str(beir), "--db", str(tmp_path / "remote.db"), "--embedder", "openai",
                 "--embedder-url", stub.url, "--embedder-model", MODEL)
    assert remote["model"] == f"openai:{MODEL}" and local["model"] != remote["model"]
    for backend in ("hybrid", "dense"):
        for metric in ("ndcg@10", "recall@100", "mrr@10"):
            assert remote["backends"][backend][metric] == pytest.approx(local["backends"][backend][metric], abs=1e-9)
        assert "embed" in remote["backends"][backend]["timings_ms"]
    assert any(p.endswith("/embeddings") for _, p, _, _ in stub.requests)


def test_rerank_flag_runs_the_stage_and_the_table_shows_it(tmp_path: Path, stub: OpenAIStub,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    beir = make_beir(tmp_path / "tiny")
    stub.requests.clear()
    report = run(capsys, str(beir), "--db", str(tmp_path / "r.db"), "--rerank-url", stub.url,
                 "--rerank-model", MODEL, "--rerank-depth", "4")
    assert report["settings"]["search"]["rerank"] is True and report["settings"]["search"]["rerank_depth"] == 4
    hybrid = report["backends"]["hybrid"]
    assert hybrid["timings_ms"]["rerank"]["n"] == 5 and not hybrid["notes"]
    reranks = [b for m, p, b, _ in stub.requests if p == "/v1/rerank"]
    assert reranks and all(len(b["documents"]) <= 4 for b in reranks)
    assert main(["bench", str(beir), "--db", str(tmp_path / "r.db"), "--rerank-url", stub.url, "--backends",
                 "hybrid", "--no-baseline", "--nonsense", "0"]) == 0
    assert "rerank p50" in capsys.readouterr().out


def test_server_flags_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    beir = make_beir(tmp_path / "tiny")
    assert main(["bench", str(beir), "--embedder-url", "http://x"]) == 1
    assert "need --embedder openai" in capsys.readouterr().err
    assert main(["bench", str(beir), "--embedder", "openai"]) == 1
    assert "needs --embedder-model" in capsys.readouterr().err
