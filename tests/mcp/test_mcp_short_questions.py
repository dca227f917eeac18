"""Issue 30 item 1 through MCP: `get_context` on a small notes folder gives the answer's passage for a short
question, and nothing (with the existing message) for nonsense. A real `desktop-memory mcp` subprocess with the
real local MiniLM model, talked to with the SDK's client."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession

from desktop_memory.config import Settings
from desktop_memory.service import MemoryService
from desktop_memory.settings_file import save_settings
from tests.support.mcp_client import mcp_client, tool_text

pytestmark = pytest.mark.slow
NOTES = Path(__file__).resolve().parents[1] / "data" / "notes_small"


def test_get_context_packs_the_answer_to_a_short_question_and_nothing_for_nonsense(tmp_path):
    notes = tmp_path / "notes"
    shutil.copytree(NOTES, notes)
    settings = Settings(db_path=str(tmp_path / "data" / "memory.db"))  # the app's default local model
    svc = MemoryService(settings)
    try:
        assert not svc.index_paths([notes]).embed_error
    finally:
        svc.close()
    save_settings(settings)

    async def body(s: ClientSession) -> dict[str, Any]:
        return {q: await s.call_tool("get_context", {"query": q})
                for q in ("tyre pressure", "bread", "purple elephant galaxy")}

    out = mcp_client([], body)
    for query, name, line in (("tyre pressure", "car.txt", "Tyre pressure: 2.3 bar"),
                              ("bread", "sourdough.md", "450 g strong white flour")):
        c = out[query].structured_content
        assert c["included"] and c["included"][0]["header"].startswith("[Source: ") and name in \
            c["included"][0]["header"], c
        assert line in c["text"]
    nonsense = out["purple elephant galaxy"]
    assert nonsense.structured_content["included"] == []
    assert tool_text(nonsense).startswith('No context for "purple elephant galaxy": no passage fits the budget or is a '
                                      "strong match.")
