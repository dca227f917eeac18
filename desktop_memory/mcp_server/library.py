"""The MCP server's access to the memory: one MemoryService, opened lazily, used from one worker thread.

Why one thread: SQLite connections belong to the thread that opened them (the service keeps one per thread), and
the SDK would otherwise run each tool call on any of its pool's threads, each opening its own connection. One
thread also means one loaded model and one set of in-memory search structures per server process.

A missing database is not an error at start-up (a chat app starts the server before the person has indexed
anything): each call reports it, and the first call after the app has made the database opens it. The server
only reads; in WAL mode a reader never blocks the app's writer. When the database is locked outright (a migration,
an exclusive lock) a call waits ``BUSY_WAIT_MS`` and then answers "busy" instead of hanging the chat.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import posixpath
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from ..config import SEMANTIC_BACKENDS, Settings
from ..context.paths import display_path
from ..errors import LibraryMissing, OutsideLibrary, UserError
from ..library_location import Location, parse_location
from ..lock_waits import probe_busy
from ..paths_guard import checked_path, not_in_library
from ..service import MemoryService

T = TypeVar("T")

BUSY_WAIT_MS = 3000  # a locked database: wait this long, then answer "busy" (the app's writes take milliseconds)


def missing_message(db_path: Path) -> str:
    if db_path.is_dir():
        return (f"{db_path} is a folder, not a desktop-memory library file: give --db the library's database file "
                f"(for example {db_path / 'memory.db'}), or leave --db out to use the app's library.")
    return (f"No desktop-memory library at {db_path}: nothing has been indexed yet. Open the desktop-memory app "
            "and add a folder (or run `desktop-memory index FOLDER`), then ask again.")


class Library:
    """Runs service calls on the server's one worker thread; opens the database on first use."""

    def __init__(self, settings: Settings, db_path: Path | str | None = None) -> None:
        self.settings = settings
        # a file, or a shared library's postgresql:// URL (docs/SHARED.md)
        self.db_path: Location = parse_location(db_path) if db_path else settings.resolved_db_location()
        self._svc: MemoryService | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dm-mcp")
        self._roots: tuple[float, list[str]] = (0.0, [])
        self._closed = threading.Event()

    # ---------- running work ----------
    async def run(self, fn: Callable[[MemoryService], T]) -> T:
        """``fn(service)`` on the worker thread, awaited without blocking the protocol loop."""
        return await asyncio.wrap_future(self._executor.submit(self._call, fn))

    def call(self, fn: Callable[[MemoryService], T]) -> T:
        """The same, blocking (tests, warm-up)."""
        return self._executor.submit(self._call, fn).result()

    def _call(self, fn: Callable[[MemoryService], T], wait_ms: int = BUSY_WAIT_MS) -> T:
        return fn(self._service(wait_ms))

    def _service(self, wait_ms: int = BUSY_WAIT_MS) -> MemoryService:
        if self._svc is None:
            if isinstance(self.db_path, Path):  # a server library says itself what is wrong with it
                if not self.db_path.is_file():
                    raise LibraryMissing(missing_message(self.db_path))
                _probe(self.db_path, wait_ms)
            self._svc = MemoryService(self.settings, db_path=self.db_path,
                                      busy_timeout_ms=BUSY_WAIT_MS)
        return self._svc

    def warm_up(self) -> None:
        """Open the database and load the model in the background, so the first search is a warm one."""
        def warm(svc: MemoryService) -> None:
            with svc.reading() as store:
                model_id, _ = store.model_info()
            if model_id and self.settings.search.backend in SEMANTIC_BACKENDS:
                svc.load_embedder()

        def run() -> None:
            try:
                self._call(warm, wait_ms=0)
            except Exception:  # reported by the first call that needs it, with its own message
                pass

        self._executor.submit(run)

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()

        def shut() -> None:
            if self._svc is not None:
                self._svc.close()

        self._executor.submit(shut)
        self._executor.shutdown(wait=True, cancel_futures=True)

    # ---------- paths ----------
    def roots(self, svc: MemoryService) -> list[str]:
        """The indexed folders, re-read at most once a second (worker thread only)."""
        at, roots = self._roots
        now = time.monotonic()
        if now - at > 1.0:
            roots = svc.library_folders()  # every machine's: a shared library's results come from all
            self._roots = (now, roots)
        return roots

    def show(self, svc: MemoryService, path: str) -> str:
        """``path`` as the context path-style setting shows it (relative to its indexed folder by default)."""
        return display_path(path, self.roots(svc), self.settings.context.path_style)

    def resolve(self, svc: MemoryService, text: str) -> str:
        """A path as a model gives it back, absolute: either absolute already, or in the shown form
        ``<indexed folder name>/<rest>``. It must be a library folder or lie inside one, by its real path too
        (paths_guard: the one check and message for every path-like argument)."""
        stripped = text.strip()
        if not stripped:
            raise UserError("The path is empty: give a folder or file as list_sources shows it.")
        roots = self.roots(svc)
        follow = self.settings.ingest.follow_symlinks
        expanded = os.path.expanduser(stripped)
        if os.path.isabs(expanded):
            return checked_path(os.path.normpath(expanded), roots, follow_symlinks=follow, may_add=False,
                                shown=text)
        parts = [p for p in stripped.replace("\\", "/").split("/") if p not in ("", ".")]
        if ".." not in parts:
            for root in sorted(roots, key=len, reverse=True):
                name = posixpath.basename(root.replace("\\", "/").rstrip("/"))
                if parts and parts[0] == name:
                    joined = os.path.join(root, *parts[1:]) if parts[1:] else root
                    return checked_path(joined, roots, follow_symlinks=follow, may_add=False, shown=text)
        raise OutsideLibrary(not_in_library(text))


def _probe(db_path: Path, wait_ms: int) -> None:
    """Fail fast with "busy" when another process holds the database locked outright: opening the service waits
    the store's long busy timeout, too long for a chat waiting on an answer."""
    probe_busy(db_path, wait_ms)


_UNITS = {"h": 3600, "d": 86400, "w": 604800}


def parse_when(text: str) -> float:
    """``2024-05-01``, ``2024-05-01T10:00`` or a relative ``7d`` / ``12h`` / ``2w`` → unix seconds."""
    t = text.strip().lower()
    age = re.fullmatch(r"([0-9]{1,7})([hdw])", t)  # ASCII digits, bounded: '²d' or 400 nines are not ages
    if age:
        return time.time() - int(age[1]) * _UNITS[age[2]]
    try:
        return dt.datetime.fromisoformat(t.upper() if "t" in t else t).timestamp()
    except ValueError:
        raise UserError(f"Not a date: {text!r}. Use an ISO date like 2024-05-01 (or 2024-05-01T10:00), "
                        "or a relative age like 7d, 12h or 2w.") from None
