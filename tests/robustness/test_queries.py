"""Issue 5 §3: hostile queries through the whole service (every backend, also the real model) and through the CLI
in a subprocess; chunker invariants checked on what the pipeline actually stored for generated files.

(Lane-level hostile queries and chunker-level properties live in tests/unit; this is the end-to-end layer.)"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from desktop_memory.chunking import chunk_document
from desktop_memory.chunking.dedupe import dedupe_within
from desktop_memory.config import BACKENDS, ChunkSettings, Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.errors import ExtractionError
from desktop_memory.models import ChunkDraft, Location, SearchResult
from desktop_memory.service import MemoryService
from desktop_memory.store import HEADING_SEP
from tests.support.chunk_contract import chunk_problems

from .conftest import LEDGER, MDDOCS, PDFS, run_cli, write_settings

MARKER = "zyxwvutquux"
ATOMS = [
    '"', "'", "*", "**", "NEAR(", "NEAR(a b, 3)", "NEAR/2", ")", "(", "((", "AND", "OR", "NOT", "^", "-", "+", ":",
    "text:", "text:*", "chunks_fts:", "{text heading}:", "- col:x", "'; DROP TABLE chunks; --", '" OR 1=1 --',
    "UNION SELECT path FROM documents", "/*", "*/", "%", "_", "\\", "\x00", "\x1b[31m", "\u202e", "\u200f",
    "\u200b", "مرحبا بالعالم", "שלום עולם", "😀", "👩‍👩‍👧", "🔥🔥", "\ud800", "\udcff", "\ufeff", "\ufffd", "\t\n",
    "MATCH", "rank", "bm25(chunks_fts)", "rowid", "ｑｕｅｒｙ", "ﬁle", "İstanbul", "ß", "0x00", "1e308", "NaN", "-0",
    "query parameters", MARKER,
]
ANY_CHAR = st.characters(exclude_categories=())  # surrogates too: a CLI argument with undecodable bytes has them


@st.composite
def hostile_queries(draw) -> str:
    kind = draw(st.sampled_from(["atoms", "atoms", "text", "chars", "long"]))
    if kind == "atoms":
        parts = draw(st.lists(st.one_of(st.sampled_from(ATOMS), st.text(max_size=12)), max_size=12))
        return draw(st.sampled_from([" ", "", '"', "\n"])).join(parts)
    if kind == "text":
        return draw(st.text(max_size=300))
    if kind == "chars":
        return draw(st.text(alphabet=ANY_CHAR, max_size=60))
    unit = draw(st.sampled_from(["x", "é ", "😀", '"', "a b ", "NEAR( ", "word" * 3 + " "]))
    return (unit * 10_000)[:draw(st.integers(2_000, 10_000))]


def _library(root: Path) -> Path:
    lib = root / "lib"
    for name in ("async.md", "benchmarks.md", "alternatives.md", "features.md", "python-types.md"):
        (lib / "docs").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(MDDOCS / "fastapi" / name, lib / "docs" / name)
    for name in ("query-params.md", "body.md", "path-params.md"):
        shutil.copyfile(MDDOCS / "fastapi" / "tutorial" / name, lib / "docs" / name)
    shutil.copyfile(PDFS / "crazyones.pdf", lib / "crazyones.pdf")
    shutil.copyfile(PDFS / "multilang.pdf", lib / "multilang.pdf")
    (lib / "marker.txt").write_text(f"The word {MARKER} appears only in this file.\n", encoding="utf-8")
    (lib / "rtl.md").write_text("# عربي\n\nمرحبا بالعالم، هذا نص عربي.\n\nשלום עולם\n", encoding="utf-8")
    (lib / "app.py").write_text("def near(a, b):\n    return a * b  # NEAR( AND OR NOT\n", encoding="utf-8")
    return lib


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    base = tmp_path_factory.mktemp("queries")
    lib = _library(base)
    svc = MemoryService(Settings(), db_path=base / "q.db", embedder=HashEmbedder(64))
    summary = svc.index_paths([lib])
    assert summary.failed == 0 and summary.chunks_embedded == summary.chunks_added > 20
    LEDGER.tried(str(p) for p in lib.rglob("*") if p.is_file())
    paths = {str(p) for p in lib.rglob("*") if p.is_file()}
    yield svc, paths, lib, base / "q.db"
    svc.close()


def _check_results(results: list[SearchResult], paths: set[str]) -> None:
    assert isinstance(results, list)
    assert [r.rank for r in results] == list(range(1, len(results) + 1))
    for r in results:
        assert r.source in paths and math.isfinite(r.score) and r.text


@hsettings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query=hostile_queries())
@example(query="")
@example(query="   ")
@example(query="x" * 10_000)
@example(query=" ".join(f"w{i}" for i in range(2_000)))
@example(query='"unbalanced')
@example(query="NEAR(")
@example(query="text:foo OR chunks_fts:bar")
@example(query="'; DROP TABLE chunks; --")
@example(query="\ud800\udcff")
def test_service_search_never_raises_on_any_backend(indexed, query):
    svc, paths, _, _ = indexed
    for backend in BACKENDS:
        started = time.monotonic()
        outcome = svc.search_outcome(query, backend=backend, top_k=10)
        LEDGER.fuzzed()
        assert time.monotonic() - started < 15, f"{backend} took too long on {query[:40]!r}"
        _check_results(outcome.results, paths)
        if not query.strip():
            assert outcome.results == []
    assert svc.check() == []  # searching never writes to the index


@hsettings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(junk=hostile_queries())
def test_escaping_keeps_the_real_words_searchable(indexed, junk):
    """Whatever surrounds it, a word of the library still finds its file (operators are just text)."""
    svc, _, lib, _ = indexed
    for backend in ("keyword", "bm25", "hybrid"):
        results = svc.search_outcome(f"{MARKER} {junk}"[:2000], backend=backend, top_k=50).results
        LEDGER.fuzzed()
        assert str(lib / "marker.txt") in {r.source for r in results}, backend


@pytest.fixture(scope="module")
def real_model(tmp_path_factory):
    from desktop_memory.embed import make_embedder

    base = tmp_path_factory.mktemp("realq")
    lib = base / "lib"
    lib.mkdir()
    for name in ("query-params.md", "body.md"):
        shutil.copyfile(MDDOCS / "fastapi" / "tutorial" / name, lib / name)
    settings = Settings()
    svc = MemoryService(settings, db_path=base / "r.db", embedder=make_embedder(settings.embedder))
    summary = svc.index_paths([lib])
    assert summary.embed_error == "" and summary.chunks_embedded > 0
    yield svc, {str(p) for p in lib.iterdir()}
    svc.close()


@pytest.mark.slow
@hsettings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query=hostile_queries())
@example(query="caf\udcff query")  # `desktop-memory search $'caf\xff query'` in a Latin-1 terminal
@example(query="x" * 10_000)
def test_real_model_search_never_raises(real_model, query):
    svc, paths = real_model
    for backend in ("hybrid", "dense"):
        outcome = svc.search_outcome(query, backend=backend, top_k=5)
        LEDGER.fuzzed()
        _check_results(outcome.results, paths)
        if query.strip():
            assert not any("semantic lane off" in n for n in outcome.notes), outcome.notes


CLI_QUERIES = [
    ('"unbalanced', "hybrid"), ("NEAR(query parameters", "keyword"), ("text:* OR - ^", "bm25"),
    ("'; DROP TABLE chunks; --", "dense"), ("", "hybrid"), ("😀 مرحبا \u202e", "keyword"),
    ("x" * 10_000, "hybrid"), ("{text}: query AND parameters*", "dense"), (b"caf\xff query", "hybrid"),
    (f"{MARKER} NOT )", "keyword"),
]


def test_cli_search_json_with_hostile_queries(indexed, tmp_path, ledger):
    _, paths, lib, db = indexed
    config = write_settings(tmp_path / "cfg", embedder={"kind": "hash"})
    for query, backend in CLI_QUERIES:
        proc = run_cli(db, "search", query, "--backend", backend, "--json", config=config, timeout=120)
        ledger.fuzzed()
        assert proc.returncode == 0, (query, proc.stderr)
        assert "Traceback" not in proc.stderr
        hits = json.loads(proc.stdout)
        assert isinstance(hits, list) and all(h["source"] in paths for h in hits)
        if isinstance(query, str) and MARKER in query:
            assert hits[0]["source"] == str(lib / "marker.txt")
    ctx = run_cli(db, "context", 'NEAR( "quote', "--budget", "300", "--json", config=config)
    ledger.fuzzed()
    assert ctx.returncode == 0 and json.loads(ctx.stdout)["tokens_used"] <= 300
    bad = run_cli(db, "search", "x", "--since", "yesterday-ish", config=config)
    assert bad.returncode == 2 and "not a date" in bad.stderr and "Traceback" not in bad.stderr


# ---------------------------------------------------------------------------------------------------------------
# chunker invariants on what the pipeline stored


WORDS = st.sampled_from(["alpha", "beta", "naïve", "日本語", "end.", "why?", "(a,b)", "def", "return", "😀", "\t"])


@st.composite
def documents(draw) -> tuple[str, str]:
    ext = draw(st.sampled_from([".md", ".txt", ".py", ".log"]))
    parts = []
    for _ in range(draw(st.integers(0, 30))):
        kind = draw(st.sampled_from(["para", "para", "heading", "fence", "long", "blank", "any", "crlf"]))
        if kind == "para":
            parts.append(" ".join(draw(st.lists(WORDS, min_size=1, max_size=80))))
        elif kind == "heading":
            parts.append("#" * draw(st.integers(1, 6)) + " " + " ".join(draw(st.lists(WORDS, max_size=6))))
        elif kind == "fence":
            parts.append("```\n" + "\n".join(draw(st.lists(WORDS, max_size=10))) + draw(st.sampled_from(["\n```", ""])))
        elif kind == "long":
            parts.append("https://example.com/" + "a" * draw(st.integers(1, 5000)))
        elif kind == "blank":
            parts.append(draw(st.sampled_from(["", " ", "\n\n\n", "\u00a0", "\f"])))
        elif kind == "crlf":
            parts.append("line one\r\nline two\rline three")
        else:
            parts.append(draw(st.text(max_size=120)))
    return ext, draw(st.sampled_from(["\n\n", "\n", " "])).join(parts)


@st.composite
def chunk_settings(draw) -> ChunkSettings:
    target = draw(st.integers(60, 1200))
    return ChunkSettings(target_chars=target, max_chars=target + draw(st.integers(0, 600)),
                         overlap_chars=draw(st.integers(0, target // 3)), code_lines=draw(st.integers(2, 40)),
                         code_overlap_lines=draw(st.integers(0, 5)))


@pytest.fixture(scope="module")
def chunk_lab(tmp_path_factory):
    base = tmp_path_factory.mktemp("chunklab")
    svc = MemoryService(Settings(), db_path=base / "c.db", embedder=HashEmbedder(16))
    yield svc, base, itertools.count()
    svc.close()


def _stored_chunks(svc: MemoryService, path: str) -> list[ChunkDraft]:
    with svc.reading() as store:
        rows = store.conn.execute(
            "select c.text, c.heading_path, c.page, c.line_start, c.line_end, c.char_start, c.char_end "
            "from chunks c join documents d on d.id = c.doc_id where d.path = ? order by c.ord", (path,)).fetchall()
    return [ChunkDraft(text, Location(heading_path=tuple(h.split(HEADING_SEP)) if h else (), page=page,
                                      line_start=ls, line_end=le, char_start=cs, char_end=ce))
            for text, h, page, ls, le, cs, ce in rows]


@hsettings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents(), cfg=chunk_settings(), encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16"]))
def test_stored_chunks_cover_the_file_and_map_back(chunk_lab, doc, cfg, encoding):
    from desktop_memory.ingest.readers import read_document

    svc, base, counter = chunk_lab
    ext, text = doc
    path = base / f"doc{next(counter)}{ext}"
    path.write_bytes(text.encode(encoding))
    LEDGER.tried([path])
    svc.apply_settings(dataclasses.replace(svc.settings, chunking=cfg))
    summary = svc.index_paths([path], embed=False)
    [outcome] = summary.outcomes
    try:
        extracted = read_document(str(path), svc.settings.ingest)
    except ExtractionError as exc:  # e.g. only whitespace: skipped with the same reason, nothing stored
        assert (outcome.status, outcome.reason) == (exc.status, exc.reason)
        assert _stored_chunks(svc, str(path)) == []
        return
    assert outcome.status == "indexed", outcome
    produced = chunk_document(extracted, cfg)
    assert chunk_problems(extracted, produced, cfg) == []  # cover the text, offsets and lines map back, caps
    stored = _stored_chunks(svc, str(path))
    assert stored == dedupe_within(produced)[0]  # what the database holds is exactly that, in order
    # back to the bytes on disk, not only to the reader's output (which normalises newlines and drops NULs)
    raw = path.read_bytes().decode(encoding).replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    for chunk in stored:
        loc = chunk.location
        assert chunk.text.endswith(raw[loc.char_start:loc.char_end])
        assert loc.line_start == raw.count("\n", 0, loc.char_start) + 1
