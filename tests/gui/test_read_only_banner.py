"""A library on a read-only file system opens for searching, and the window says so once (issue 11)."""

from __future__ import annotations

import shutil
from pathlib import Path

from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.service import MemoryService
from tests.support.filesystems import IS_ROOT, mounted_tmpfs, remount_ro

from .conftest import FASTAPI


def test_read_only_library_opens_with_one_banner(qtbot, make_window, hash_factory, tmp_path: Path) -> None:
    assert IS_ROOT, "this test mounts a tmpfs and needs root (the CI container runs as root)"
    with mounted_tmpfs(tmp_path / "mnt", "32m") as mnt:
        assert mnt is not None
        db = mnt / "lib.db"
        docs = tmp_path / "docs"
        docs.mkdir()
        shutil.copy(FASTAPI / "async.md", docs / "async.md")
        svc = MemoryService(Settings(), db_path=db, embedder=HashEmbedder(64))
        svc.index_paths([docs])
        svc.close()
        assert remount_ro(mnt)
        w = make_window(hash_factory, settings=Settings(db_path=str(db)))
        qtbot.waitUntil(lambda: any("read-only" in t for t in w.banners.texts()), timeout=20000)
        assert sum("read-only" in t for t in w.banners.texts()) == 1
        assert w.svc.search_outcome("async", backend="keyword").results
        w.close()
