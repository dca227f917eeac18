"""Small libraries the behaviour suites build again and again: a folder of numbered notes that each carry one word, a
copy of part of the test corpus, and settings whose watcher reacts within a test's patience."""

from __future__ import annotations

import shutil
from pathlib import Path

from desktop_memory.config import Settings, WatchSettings


def word_notes(folder: Path, n: int, word: str) -> Path:
    """``n`` Markdown notes ``<word>-NN.md`` in ``folder`` (created), each a heading and one line holding ``word``."""
    folder.mkdir(parents=True)
    for i in range(n):
        (folder / f"{word}-{i:02d}.md").write_text(f"# {word} {i}\n\n{word} note {i}\n", encoding="utf-8")
    return folder


def quick_watch_settings(db: Path) -> Settings:
    """The default settings on the library ``db``, with a watcher that settles in 0.1 s and waits at most 1 s."""
    return Settings(db_path=str(db), watch=WatchSettings(quiet_ms=100, max_wait_ms=1000))


def copy_tree(src: Path, dst: Path, limit: int | None = None, pattern: str = "*.md") -> list[Path]:
    """The first ``limit`` files matching ``pattern`` under ``src`` (path order), copied to the same places under
    ``dst``; returns the copies."""
    files = sorted(p for p in src.rglob(pattern) if p.is_file())[:limit]
    out = []
    for f in files:
        target = dst / f.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, target)
        out.append(target)
    return out
