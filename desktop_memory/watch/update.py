"""What the watcher tells its front end: one value per update, with the line a person reads."""

from __future__ import annotations

from dataclasses import dataclass

# kinds of update
WATCHING = "watching"  # the set of watched folders changed (start, pause, resume, a folder added or removed)
CATCH_UP = "catch-up"  # a folder was compared with the index after start or resume
CHECKING = "checking"  # a catch-up is walking a big folder: how far it got (every second)
CHANGE = "change"  # a batch of changes reached the index
EMBEDDED = "embedded"  # vectors were made for what the last batches added
ERROR = "error"  # something went wrong; watching goes on

# states of one folder
STATE_WATCHING = "watching"
STATE_PAUSED = "paused"
STATE_MISSING = "missing"  # the folder is not there (unplugged drive, moved): its index is kept
STATE_ERROR = "error"  # it cannot be watched (e.g. the system's watch limit); see the error update


@dataclass(frozen=True)
class WatchUpdate:
    kind: str
    message: str  # one line, for the CLI's output and the GUI's status bar
    indexed: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: int = 0
    failed: int = 0
    chunks_embedded: int = 0
    events: int = 0  # raw file-system events folded into this update
    paths: tuple[str, ...] = ()  # files indexed or removed
    elapsed_s: float = 0.0
    watching: int = 0  # folders being watched after this update

    @property
    def changed(self) -> bool:
        return bool(self.indexed or self.removed or self.failed or self.skipped)
