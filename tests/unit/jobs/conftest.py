"""The scheduler with the real service and store and the paced embedder (tests/support/paced.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from desktop_memory.config import Settings, WatchSettings
from desktop_memory.service import MemoryService
from tests.support.paced import SLICE_S, PacedEmbedder, wait_for, write_folder

__all__ = ["SLICE_S", "wait_for", "write_folder"]

@pytest.fixture()
def paced() -> PacedEmbedder:
    return PacedEmbedder()


@pytest.fixture()
def svc(tmp_path, paced) -> Iterator[MemoryService]:
    settings = Settings(watch=WatchSettings(quiet_ms=100, max_wait_ms=1000))
    service = MemoryService(settings, db_path=tmp_path / "db" / "memory.db", embedder=paced)
    yield service
    service.close()
