"""The MCP suite's library: real FastAPI docs and a real PDF indexed with the hash embedder, its settings saved
where the server subprocess reads them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.service import MemoryService
from desktop_memory.settings_file import save_settings
from tests.conftest import MDDOCS, PDFS
from tests.support.mcp_client import mcp_settings

FASTAPI = MDDOCS / "fastapi"
DOCS = ("async.md", "benchmarks.md", "environment-variables.md", "alternatives.md")


@pytest.fixture
def library(tmp_path: Path) -> dict[str, Path]:
    """A real indexed library: four FastAPI docs in a folder `docs`, a PDF in `docs/pdf`, settings that name it."""
    docs = tmp_path / "home" / "alice" / "docs"
    (docs / "pdf").mkdir(parents=True)
    for name in DOCS:
        shutil.copy(FASTAPI / name, docs / name)
    shutil.copy(PDFS / "crazyones.pdf", docs / "pdf" / "crazyones.pdf")
    db = tmp_path / "data" / "memory.db"
    settings = mcp_settings(db)
    svc = MemoryService(settings, embedder=HashEmbedder(64))
    try:
        summary = svc.index_paths([docs])
    finally:
        svc.close()
    assert summary.indexed == len(DOCS) + 1
    save_settings(settings)  # into DESKTOP_MEMORY_CONFIG_DIR (tests/conftest.py isolates it)
    return {"docs": docs, "db": db}
