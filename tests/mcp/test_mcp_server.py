"""Issue 15 §1: `desktop-memory mcp` through the SDK's own client over a real stdio subprocess.

A real SQLite library (real FastAPI docs and a real PDF, the fast hashing embedder) is served by
`python -m desktop_memory.cli mcp`; the test talks to it with `mcp.client.stdio` + `ClientSession` exactly as a chat
app would: tools listed with schemas, each tool called, bad arguments answered with clear tool errors, a missing
library and a locked database reported (not a crash), indexing by the app not blocked while the server reads.
"""

from __future__ import annotations

import shutil
from typing import Any

import apsw
from mcp.client.session import ClientSession

from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.service import MemoryService
from desktop_memory.settings_file import save_settings
from tests.mcp.conftest import DOCS, FASTAPI
from tests.support.mcp_client import mcp_client, mcp_settings, tool_text

READ_TOOLS = {"search", "get_context", "get_passage", "list_sources"}


def test_tools_are_listed_with_descriptions_and_schemas(library):
    async def body(s: ClientSession):
        return (await s.list_tools()).tools

    tools = {t.name: t for t in mcp_client([], body)}
    assert set(tools) == READ_TOOLS, "read-only by default: no index_path"
    for t in tools.values():
        assert len(t.description or "") > 80, t.name
        assert t.input_schema["type"] == "object" and t.input_schema["properties"], t.name
        assert t.output_schema and t.output_schema["properties"], t.name
        assert t.annotations is not None and t.annotations.read_only_hint is True
    props = tools["search"].input_schema["properties"]
    assert tools["search"].input_schema["required"] == ["query"]
    assert {"query", "top_k", "backend", "path", "glob", "kinds", "modified_since", "modified_until"} <= set(props)
    assert props["top_k"]["maximum"] == 50 and props["top_k"]["minimum"] == 1
    assert "budget_tokens" in tools["get_context"].input_schema["properties"]
    assert tools["get_passage"].input_schema["required"] == ["id"]


def test_every_tool_answers_with_text_and_structured_content(library):
    async def body(s: ClientSession):
        out: dict[str, Any] = {}
        out["search"] = await s.call_tool("search", {"query": "environment variables", "top_k": 3})
        out["context"] = await s.call_tool("get_context", {"query": "async and await", "budget_tokens": 400})
        first = out["context"].structured_content["included"][0]["id"]
        out["passage"] = await s.call_tool("get_passage", {"id": first, "neighbours": 1})
        out["sources"] = await s.call_tool("list_sources", {})
        out["folder"] = await s.call_tool("list_sources", {"folder": "docs/pdf"})
        out["pdf"] = await s.call_tool("search", {"query": "the crazy ones misfits rebels", "kinds": ["pdf"]})
        out["filtered"] = await s.call_tool("search", {"query": "async", "path": "docs/pdf", "backend": "keyword"})
        out["glob"] = await s.call_tool("search", {"query": "benchmarks", "glob": "*bench*.md"})
        return out

    out = mcp_client([], body)
    assert not any(r.is_error for r in out.values()), {k: tool_text(r) for k, r in out.items() if r.is_error}

    hits = out["search"].structured_content["results"]
    assert 1 <= len(hits) <= 3
    top = hits[0]
    assert top["source"] == "docs/environment-variables.md", "paths relative to the indexed folder by default"
    assert top["strength"] in ("strong", "weak") and top["why"] and top["lanes"] and top["text"]
    assert top["location"]["heading_path"] == ["Environment Variables"]
    text = tool_text(out["search"])
    assert "[Source: docs/environment-variables.md § Environment Variables" in text and str(library["docs"]) not in text

    c = out["context"].structured_content
    p = out["passage"].structured_content
    assert p["id"] == c["included"][0]["id"] and p["source"] == "docs/async.md" and p["text"]
    assert c["included"][0]["header"].startswith(f"[Source: {p['source']} § ")
    assert p["passages_in_file"] > 10 and len(p["before"]) + len(p["after"]) >= 1
    assert all(abs(n["id"] - p["id"]) <= 1 for n in p["before"] + p["after"])
    assert "=== the passage ===" in tool_text(out["passage"])

    assert c["text"].startswith("[Source: docs/") and c["tokens_used"] <= c["budget"] == 400
    assert c["included"] and tool_text(out["context"]).startswith(c["text"])
    assert all(part["reason"] in ("over budget", "weak match") for part in c["left_out"])

    src = out["sources"].structured_content
    assert src["folders"] == [{"path": "docs", "files": {"indexed": len(DOCS) + 1}, "chunks": src["passages"]}]
    assert src["documents"] == {"indexed": len(DOCS) + 1} and src["model"] == "hash-test-64"
    assert [f["path"] for f in out["folder"].structured_content["files"]] == ["docs/pdf/crazyones.pdf"]

    assert out["pdf"].structured_content["results"][0]["source"] == "docs/pdf/crazyones.pdf"
    assert out["pdf"].structured_content["results"][0]["location"]["page"] == 1
    assert {h["source"] for h in out["filtered"].structured_content["results"]} <= {"docs/pdf/crazyones.pdf"}
    assert {h["source"] for h in out["glob"].structured_content["results"]} == {"docs/benchmarks.md"}


def test_bad_arguments_get_clear_tool_errors(library):
    calls = {
        "top_k": ("search", {"query": "x", "top_k": 500}),
        "no query": ("search", {}),
        "backend": ("search", {"query": "x", "backend": "magic"}),
        "date": ("search", {"query": "x", "modified_since": "last tuesday"}),
        "path": ("search", {"query": "x", "path": "elsewhere/stuff"}),
        "dotdot": ("get_context", {"query": "x", "path": "docs/../.."}),
        "passage": ("get_passage", {"id": 987654}),
        "not indexing": ("index_path", {"path": "docs"}),
    }

    async def body(s: ClientSession):
        return {k: await s.call_tool(name, args) for k, (name, args) in calls.items()}

    out = mcp_client([], body)
    assert all(r.is_error for r in out.values()), [k for k, r in out.items() if not r.is_error]
    msg = {k: tool_text(r) for k, r in out.items()}
    assert msg["top_k"] == "'top_k' must be a whole number from 1 to 50 (got 500)."
    assert msg["no query"] == "The argument 'query' is required: text of 1 to 2000 characters."
    assert msg["backend"] == "'backend' must be one of hybrid, keyword, bm25, dense (got 'magic')."
    assert "Not a date: 'last tuesday'" in msg["date"] and "7d" in msg["date"]
    assert msg["path"].startswith("'elsewhere/stuff' is not a folder in the library")
    assert msg["dotdot"].startswith("'docs/../..' is not a folder in the library"), "one check, one message"
    assert "No passage with id 987654" in msg["passage"]
    assert "Unknown tool: index_path" in msg["not indexing"]
    assert not any("Traceback" in m for m in msg.values())


def test_missing_library_is_reported_then_found_once_indexed(tmp_path):
    db = tmp_path / "later" / "memory.db"
    docs = tmp_path / "notes"
    docs.mkdir()
    shutil.copy(FASTAPI / "async.md", docs / "async.md")
    save_settings(mcp_settings(db))

    async def body(s: ClientSession):
        before = [await s.call_tool(name, args) for name, args in
                  [("list_sources", {}), ("search", {"query": "await"}), ("get_passage", {"id": 1})]]
        svc = MemoryService(mcp_settings(db), embedder=HashEmbedder(64))  # the app indexes while the server runs
        try:
            svc.index_paths([docs])
        finally:
            svc.close()
        after = await s.call_tool("search", {"query": "await", "top_k": 1})
        return before, after

    before, after = mcp_client([], body)
    for r in before:
        assert r.is_error and f"No desktop-memory library at {db}" in tool_text(r) and "index" in tool_text(r)
    assert not after.is_error and after.structured_content["results"][0]["source"] == "notes/async.md"


def test_locked_database_answers_busy_then_recovers(library):
    lock = apsw.Connection(str(library["db"]))
    lock.execute("pragma locking_mode=exclusive")
    lock.execute("begin exclusive")  # another program holds the whole file (as a schema upgrade would)
    lock.execute("update meta set value = value")

    async def body(s: ClientSession):
        busy = await s.call_tool("search", {"query": "await"})
        lock.execute("commit")
        lock.close()  # an exclusive-mode connection keeps its lock until it closes
        return busy, await s.call_tool("search", {"query": "await"})

    try:
        busy, ok = mcp_client([], body)
    finally:
        lock.close()  # no-op when already closed
    assert busy.is_error and "is busy" in tool_text(busy) and "Try again in a moment" in tool_text(busy)
    assert not ok.is_error and ok.structured_content["results"]


def test_server_never_blocks_the_apps_indexing(library):
    """While the server holds its connection and answers, the app's writer commits at once (WAL readers)."""
    new = library["docs"] / "editor-support.md"

    async def body(s: ClientSession):
        await s.call_tool("search", {"query": "await"})
        shutil.copy(FASTAPI / "editor-support.md", new)
        # busy timeout 0: a blocked writer would fail here instead of waiting
        svc = MemoryService(mcp_settings(library["db"]), embedder=HashEmbedder(64), busy_timeout_ms=0)
        try:
            summary = svc.index_paths([library["docs"]])
        finally:
            svc.close()
        found = await s.call_tool("search", {"query": "editor support autocompletion", "top_k": 3})
        return summary, found

    summary, found = mcp_client([], body)
    assert summary.indexed == 1
    assert "docs/editor-support.md" in [h["source"] for h in found.structured_content["results"]]


def test_allow_indexing_adds_index_path_limited_to_library_folders(library, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (library["docs"] / "new-note.md").write_text("# Zebra migration\n\nThe zebras crossed the river at dawn.\n")
    absolute = mcp_settings(library["db"], path_style="absolute")
    save_settings(absolute)

    async def body(s: ClientSession):
        names = {t.name for t in (await s.list_tools()).tools}
        refused = await s.call_tool("index_path", {"path": str(outside)})
        done = await s.call_tool("index_path", {"path": str(library["docs"])})
        found = await s.call_tool("search", {"query": "zebras crossed the river", "top_k": 1})
        return names, refused, done, found

    names, refused, done, found = mcp_client(["--allow-indexing"], body)
    assert names == READ_TOOLS | {"index_path"}
    assert refused.is_error and f"{str(outside)!r} is not a folder in the library" in tool_text(refused)
    assert not done.is_error and done.structured_content["indexed"] == 1
    assert done.structured_content["path"] == str(library["docs"]), "path style 'absolute' is honoured"
    assert found.structured_content["results"][0]["source"] == str(library["docs"] / "new-note.md")
