"""Real folders in tmp_path, the real SQLite store, the fast hashing embedder, a real watchdog observer."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from desktop_memory.config import Settings, WatchSettings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.service import MemoryService
from desktop_memory.watch import Watcher, WatchUpdate
from tests.support.waiting import wait_for  # noqa: F401  (the suite imports it from here)


def keyword_hits(svc: MemoryService, query: str) -> list[str]:
    return [r.source for r in svc.search_outcome(query, backend="keyword").results]


@pytest.fixture()
def svc(tmp_path) -> Iterator[MemoryService]:
    settings = Settings(watch=WatchSettings(quiet_ms=100, max_wait_ms=1000))
    service = MemoryService(settings, db_path=tmp_path / "db" / "memory.db", embedder=HashEmbedder())
    yield service
    service.close()


@pytest.fixture()
def calm_svc(tmp_path) -> Iterator[MemoryService]:
    """A longer quiet period, for tests that count batches on a busy machine (CPU contention spaces writes out)."""
    settings = Settings(watch=WatchSettings(quiet_ms=600, max_wait_ms=10000))
    service = MemoryService(settings, db_path=tmp_path / "db" / "calm.db", embedder=HashEmbedder())
    yield service
    service.close()


class Recorder:
    """Collects a watcher's updates (they arrive on its worker thread)."""

    def __init__(self) -> None:
        self.updates: list[WatchUpdate] = []
        self.lock = threading.Lock()

    def __call__(self, update: WatchUpdate) -> None:
        with self.lock:
            self.updates.append(update)

    def of(self, kind: str) -> list[WatchUpdate]:
        with self.lock:
            return [u for u in self.updates if u.kind == kind]


@pytest.fixture()
def start_watcher(svc) -> Iterator[Callable[..., tuple[Watcher, Recorder]]]:
    started: list[Watcher] = []

    def start(service: MemoryService | None = None, **kwargs) -> tuple[Watcher, Recorder]:
        rec = Recorder()
        watcher = Watcher(service or svc, on_update=rec, **kwargs)
        watcher.start()
        started.append(watcher)
        assert watcher.ready.wait(30), "the watcher's start-up (first catch-up) did not finish"
        return watcher, rec

    yield start
    for w in started:
        w.stop()


def make_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root
