"""A QA walk of the merged product (issue 30 items 4 and 5), in the real window with the real service and store:
the "Included again" banner leaves with what it names; a removal the app finishes by itself is shown; the
embedding panel shows one count of vectors, not two that contradict."""

from __future__ import annotations

from pathlib import Path

from desktop_memory.config import Settings, WatchSettings

from .helpers import drop, wait_job


def _settings(tmp_path: Path) -> Settings:
    return Settings(db_path=str(tmp_path / "db" / "lib.db"), watch=WatchSettings(quiet_ms=100, max_wait_ms=1000))


def _tree(folder: Path, n: int, word: str) -> Path:
    folder.mkdir(parents=True)
    for i in range(n):
        (folder / f"{word}-{i:02d}.md").write_text(f"# {word} {i}\n\n{word} note {i}\n", encoding="utf-8")
    return folder


def _included_banner(w) -> bool:
    return any(t.startswith("Included again") for t in w.banners.texts())


def test_the_included_again_banner_leaves_when_the_library_it_names_is_removed(qtbot, make_window, hash_factory,
                                                                            tmp_path):
    root = tmp_path / "notes"
    big = _tree(root / "big", 4, "walrus")
    _tree(root / "small", 2, "kiwi")
    w = make_window(hash_factory, _settings(tmp_path))
    drop(w, [root])
    wait_job(qtbot, w)
    w.remove_paths([str(big)])  # a folder inside the library: excluded
    qtbot.waitUntil(lambda: w.svc.exclusions() == [str(big)], timeout=20000)
    wait_job(qtbot, w)
    drop(w, [big])  # named again by the person: included again, and the banner says so
    wait_job(qtbot, w)
    qtbot.waitUntil(lambda: _included_banner(w), timeout=10000)

    w.remove_paths([str(root)])  # the whole library leaves: the banner naming part of it goes too
    qtbot.waitUntil(lambda: w.svc.roots() == [], timeout=20000)
    qtbot.waitUntil(lambda: not _included_banner(w), timeout=10000)
