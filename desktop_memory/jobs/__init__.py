"""The one scheduler for every write to the library (Qt-free): see scheduler.py."""

from .events import (
    BurstEnded,
    Done,
    Dropped,
    Failed,
    JobEvent,
    Paused,
    Progress,
    Queued,
    Removing,
    Started,
    Yielded,
    unhandled,
)
from .queue import (
    AUTO,
    BULK,
    CHECK,
    COMPACT,
    EMBED,
    PERSON,
    PRIORITY,
    READ,
    REMOVE,
    SETTINGS,
    WATCH,
    WATCHED,
    Job,
    JobQueue,
)
from .scheduler import Scheduler, describe
from .summary import add_reads, merge_summaries

__all__ = ["AUTO", "BULK", "CHECK", "COMPACT", "EMBED", "PERSON", "PRIORITY", "READ", "REMOVE", "SETTINGS", "WATCH",
           "WATCHED", "BurstEnded", "Done", "Dropped", "Failed", "Job", "JobEvent", "JobQueue", "Paused", "Progress",
           "Queued", "Removing", "Scheduler", "Started", "Yielded", "add_reads", "describe", "merge_summaries",
           "unhandled"]
