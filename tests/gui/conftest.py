"""GUI test fixtures. Qt runs offscreen and config/data dirs are isolated per test (both in tests/conftest.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from desktop_memory.config import Settings, settings_path
from tests.conftest import EVAL, MDDOCS, PDFS

FASTAPI = MDDOCS / "fastapi"
__all__ = ["EVAL", "FASTAPI", "PDFS"]


@pytest.fixture
def docs_dir(tmp_path: Path) -> Path:
    """A handful of real FastAPI Markdown docs, one good PDF and one broken PDF, copied to a temp folder."""
    d = tmp_path / "docs"
    d.mkdir()
    for name in ("async.md", "benchmarks.md", "environment-variables.md", "alternatives.md", "editor-support.md"):
        shutil.copy(FASTAPI / name, d / name)
    shutil.copy(PDFS / "crazyones.pdf", d / "crazyones.pdf")
    return d


@pytest.fixture
def broken_pdf(tmp_path: Path) -> Path:
    p = tmp_path / "broken" / "poppler-742-0-fuzzed.pdf"
    p.parent.mkdir()
    shutil.copy(PDFS / "poppler-742-0-fuzzed.pdf", p)
    return p


@pytest.fixture
def opened(monkeypatch):
    """Records open/reveal requests instead of launching apps."""
    calls: list[tuple[str, str]] = []
    from desktop_memory.gui import desktop

    monkeypatch.setattr(desktop, "open_path", lambda p: calls.append(("open", p)) or True)
    monkeypatch.setattr(desktop, "reveal_path", lambda p: calls.append(("reveal", p)) or True)
    monkeypatch.setattr(desktop, "start_detached", lambda prog, args: calls.append(("start", [prog, *args])) or True)
    monkeypatch.setattr(desktop, "default_command", lambda kind: "")  # no editor on PATH: the default app
    return calls


@pytest.fixture
def inline_tasks(monkeypatch):
    """Every TaskRunner built during the test runs its jobs inline (for tests that need results, not threads)."""
    from desktop_memory.gui.tasks import TaskRunner

    monkeypatch.setattr(TaskRunner, "inline_default", True)


@pytest.fixture
def hash_factory():
    """The real MemoryService with the fast deterministic HashEmbedder."""
    from desktop_memory.embed.hashing import HashEmbedder
    from desktop_memory.service import MemoryService

    made = []

    def factory(settings: Settings):
        svc = MemoryService(settings, embedder=HashEmbedder(64))
        made.append(svc)
        return svc

    factory.made = made  # type: ignore[attr-defined]
    return factory


PACED_SLICE_S = 0.3  # seconds per embedding slice of 16 passages: 120 files of 8 passages embed for ~18 s


@pytest.fixture
def paced_factory():
    """The real MemoryService with an embedder that takes real time per slice (tests/support/paced.py), so an
    embedding lasts long enough to do things beside it."""
    from desktop_memory.service import MemoryService
    from tests.support.paced import PacedEmbedder

    made = []

    def factory(settings: Settings):
        svc = MemoryService(settings, embedder=PacedEmbedder(PACED_SLICE_S))
        made.append(svc)
        return svc

    factory.made = made  # type: ignore[attr-defined]
    return factory


@pytest.fixture
def make_window(qtbot):
    """Build a MainWindow around a service factory and wait until the service is open."""
    from desktop_memory.gui.main_window import MainWindow

    windows = []

    def make(factory, settings: Settings | None = None, wait_ready: bool = True, **kw):
        w = MainWindow(settings or Settings(), service_factory=factory, settings_path=settings_path(), **kw)
        qtbot.addWidget(w)
        windows.append(w)
        w.resize(1200, 800)
        w.show()
        w.activateWindow()  # window shortcuts (Ctrl+K, Ctrl+Shift+C) need the active window
        qtbot.waitUntil(w.isActiveWindow, timeout=5000)
        if wait_ready:
            qtbot.waitUntil(lambda: w.svc is not None and w.stats is not None, timeout=15000)
            # a loaded embedder re-runs the current search once; settle that before the test types
            qtbot.waitUntil(lambda: w.embedder_state != "loading", timeout=60000)
        return w

    yield make
    for w in windows:
        if not w._closing:
            w.close()


@pytest.fixture
def runner(qtbot):
    """A TaskRunner of three workers for a controller tested on its own; waited for and deleted after the test."""
    from desktop_memory.gui.tasks import TaskRunner

    r = TaskRunner(max_threads=3)
    yield r
    r.wait(10000)
    r.deleteLater()
    qtbot.wait(10)  # one pass of the event loop so the deleteLater above runs (nothing to wait for)
