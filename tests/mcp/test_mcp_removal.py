"""Issue 30 item 4 through MCP (the SDK's client over a real stdio subprocess): an interrupted removal's file is
neither listed nor searchable, `index_path` finishes that removal before it writes, and a folder the person removed
from the library is not brought back by an agent's `index_path`."""

from __future__ import annotations

from typing import Any

from mcp.client.session import ClientSession

from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.service import MemoryService
from tests.support.mcp_client import mcp_client, mcp_settings, tool_text


def test_index_path_finishes_an_interrupted_removal_and_keeps_exclusions(library):
    docs = library["docs"]
    svc = MemoryService(mcp_settings(library["db"]), embedder=HashEmbedder(64))
    try:
        svc.remove_paths([docs / "pdf"], exclude=True)  # the person removed this folder from the library
        with svc.writing() as store:  # a `remove` killed right after recording its intent
            store.begin_removal([str(docs / "async.md")], exclude=[str(docs / "async.md")])
    finally:
        svc.close()

    async def body(s: ClientSession) -> tuple[Any, ...]:
        sources = await s.call_tool("list_sources", {})
        found = await s.call_tool("search", {"query": "async await concurrency coroutines", "top_k": 10})
        refused = await s.call_tool("index_path", {"path": str(docs / "pdf")})
        done = await s.call_tool("index_path", {"path": str(docs)})
        return sources, found, refused, done

    sources, found, refused, done = mcp_client(["--allow-indexing"], body)
    assert "async.md" not in tool_text(sources) and "crazyones.pdf" not in tool_text(sources)
    assert all(not r["source"].endswith("async.md") for r in found.structured_content["results"])
    assert refused.is_error and "removed from the library by its owner" in tool_text(refused), tool_text(refused)
    assert not done.is_error and done.structured_content["indexed"] == 0
    svc = MemoryService(mcp_settings(library["db"]), embedder=HashEmbedder(64))
    try:
        assert svc.pending_removals() == [] and svc.exclusions() == [str(docs / "async.md"), str(docs / "pdf")]
        assert {d.path.rsplit("/", 1)[-1] for d in svc.documents()} == {"benchmarks.md", "environment-variables.md",
                                                                        "alternatives.md"}
    finally:
        svc.close()
