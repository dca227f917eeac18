"""Live folders: every folder of the library is watched and kept in sync with the index (no Qt here).

``Watcher`` (watcher.py) runs watchdog's observer (observer.py), folds events into calm batches (debounce.py),
decides what to index or remove with the walk's own rules (plan.py) and calls the service, on one worker thread.
"""

from .update import (
    CATCH_UP,
    CHANGE,
    CHECKING,
    EMBEDDED,
    ERROR,
    STATE_ERROR,
    STATE_MISSING,
    STATE_PAUSED,
    STATE_WATCHING,
    WATCHING,
    WatchUpdate,
)
from .watcher import Watcher

__all__ = ["CATCH_UP", "CHANGE", "CHECKING", "EMBEDDED", "ERROR", "STATE_ERROR", "STATE_MISSING", "STATE_PAUSED",
           "STATE_WATCHING", "WATCHING", "WatchUpdate", "Watcher"]
