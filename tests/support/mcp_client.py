"""`desktop-memory mcp` as a chat app sees it: the server started as a stdio subprocess and driven by the MCP SDK's
own client, on a library indexed with the hash embedder (the server process builds the same one from its settings)."""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from desktop_memory.config import ContextSettings, EmbedderSettings, Settings

REPO = Path(__file__).resolve().parents[2]


def mcp_settings(db: Path, **context: Any) -> Settings:
    """Settings naming the library ``db`` with the hash embedder (and ``context`` settings, if any)."""
    return Settings(db_path=str(db), embedder=EmbedderSettings(kind="hash"), context=ContextSettings(**context))


def mcp_client(args: list[str], body: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    """Start `desktop-memory mcp ARGS` as a subprocess and run ``body`` with an initialised client session."""
    env = {k: os.environ[k] for k in ("DESKTOP_MEMORY_CONFIG_DIR", "DESKTOP_MEMORY_DATA_DIR")}
    env["PYTHONPATH"] = str(REPO)

    async def main() -> Any:
        params = StdioServerParameters(command=sys.executable, args=["-m", "desktop_memory.cli", "mcp", *args],
                                       env=env, cwd=str(REPO))
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                return await body(session)

    return anyio.run(main)


def tool_text(result: Any) -> str:
    """The text parts of a tool call's result, one per line."""
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")
