"""A word in no real file, and how often it is still on disk: "removed means gone" is checked by searching the
database files byte by byte (tests/robustness/test_removed_means_gone.py, tests/unit/jobs/)."""

from __future__ import annotations

from pathlib import Path

WORD = "quixoticzebrafjord"  # in no real file
TAIL = WORD[-8:].encode()  # FTS5 stores a term after the prefix it shares with the previous one: look for its tail


def occurrences(db: Path) -> dict[str, int]:
    """How often the word's tail appears in each database file on disk (-shm holds no content)."""
    out = {}
    for suffix in ("", "-wal"):
        path = Path(f"{db}{suffix}")
        out[suffix or "db"] = path.read_bytes().count(TAIL) if path.exists() else 0
    return out
