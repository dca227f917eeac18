"""Issue 16 in the window: "Compact and erase" in the Library runs off the UI thread and leaves no removed text in
the database files; a library made owner-only on open says so in a banner (real MemoryService, real SQLite)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from desktop_memory.config import Settings, data_dir

from .conftest import FASTAPI
from .helpers import drop, wait_job

WORD = "quixoticzebrafjord"


def _grep(db: Path) -> int:
    return sum(Path(f"{db}{s}").read_bytes().count(WORD[-8:].encode())
               for s in ("", "-wal") if Path(f"{db}{s}").exists())


def test_remove_then_compact_and_erase_from_the_library(qtbot, make_window, hash_factory, tmp_path):
    lib = tmp_path / "notes"
    lib.mkdir()
    for src in sorted((FASTAPI / "tutorial").glob("*.md"))[:4]:
        shutil.copyfile(src, lib / src.name)
    (lib / "secret.md").write_text(f"# Secret\n\nThe hint is {WORD}.\n", encoding="utf-8")
    w = make_window(hash_factory, Settings(db_path=str(tmp_path / "db" / "g.db")))
    drop(w, [lib])
    wait_job(qtbot, w)
    db = w.svc.db_path
    with w.svc.writing() as store:
        store.checkpoint()  # the secret is in the main file now, not only in the WAL
    assert _grep(db) > 0
    w.tabs.setCurrentIndex(1)
    w.library.remove_requested.emit([str(lib / "secret.md")])
    qtbot.waitUntil(lambda: w.library.model.document_count() == 4, timeout=10000)
    qtbot.waitUntil(lambda: _grep(db) == 0, timeout=10000)  # removed means gone, without compacting

    assert w.library.compact_btn.isEnabled()
    with qtbot.waitSignal(w.library.compact_finished, timeout=30000) as sig:
        w.library.compact_btn.click()
        assert w.library.compact_btn.text().startswith("Compacting…")  # pressed again, it cancels
    message, level = sig.args
    assert level == "info" and "Compacted the library" in message
    assert any("Compacted the library" in t for t in w.banners.texts())
    assert w.library.compact_btn.isEnabled()
    assert _grep(db) == 0 and w.svc.check() == []


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_a_loose_library_is_made_private_with_a_banner(qtbot, make_window, hash_factory):
    data_dir().mkdir(parents=True)
    os.chmod(data_dir(), 0o755)
    w = make_window(hash_factory)
    texts = [t for t in w.banners.texts() if "private to you" in t]
    assert len(texts) == 1 and str(data_dir()) in texts[0]
    assert os.stat(data_dir()).st_mode & 0o777 == 0o700
