"""The MCP server reranks like the app: `desktop-memory mcp` in a real stdio subprocess, a real MCP client, and the
loopback reranker (MiniLM cosine behind the Cohere/Jina API) that wants an API key, given as an MCP client's config
would give it (an environment variable)."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from desktop_memory.config import SearchSettings
from desktop_memory.settings_file import save_settings
from tests.support.mcp_client import REPO
from tests.support.mcp_client import mcp_settings as base_settings
from tests.support.openai_server import MODEL, OpenAIStub

KEY = "rk-mcp-8086"


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub() as s:
        yield s


def _search(query: str, key: str) -> Any:
    env = {k: os.environ[k] for k in ("DESKTOP_MEMORY_CONFIG_DIR", "DESKTOP_MEMORY_DATA_DIR",
                                      "DESKTOP_MEMORY_NO_KEYRING")}
    env["PYTHONPATH"] = str(REPO)
    env["DESKTOP_MEMORY_RERANK_API_KEY"] = key

    async def main() -> Any:
        params = StdioServerParameters(command=sys.executable, args=["-m", "desktop_memory.cli", "mcp"], env=env,
                                       cwd=str(REPO))
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                return await session.call_tool("search", {"query": query, "top_k": 5})

    return anyio.run(main)


def test_mcp_search_is_reranked_and_falls_back_with_a_note(library: dict[str, Path],
                                                           stub: OpenAIStub) -> None:
    stub.api_key = KEY
    settings = base_settings(library["db"])
    search = SearchSettings(rerank=True, rerank_url=stub.url, rerank_model=MODEL, rerank_timeout_s=30)
    save_settings(dataclasses.replace(settings, search=search))
    out = _search("environment variables", KEY)
    assert not out.is_error
    hits = out.structured_content["results"]
    assert hits and "rerank #1, score" in hits[0]["why"] and hits[0]["lanes"]["rerank"]["rank"] == 1
    assert any(p == "/v1/rerank" and h.get("authorization") == f"Bearer {KEY}" for _, p, _, h in stub.requests)
    wrong = _search("environment variables", "rk-wrong-0000")  # a refused key: results, a note, no rerank
    assert not wrong.is_error
    data = wrong.structured_content
    assert data["results"] and all("rerank" not in h["lanes"] for h in data["results"])
    assert any("rerank off" in n and "API key" in n for n in data["notes"])
    assert "rk-wrong-0000" not in str(data)
