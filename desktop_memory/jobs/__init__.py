"""The one scheduler for every write to the library (Qt-free): see scheduler.py."""

from .queue import AUTO, COMPACT, EMBED, PERSON, PRIORITY, READ, REMOVE, WATCH, WATCHED, Event, Job, JobQueue
from .scheduler import Scheduler, describe
from .summary import add_reads, merge_summaries

__all__ = ["AUTO", "COMPACT", "EMBED", "PERSON", "PRIORITY", "READ", "REMOVE", "WATCH", "WATCHED", "Event", "Job",
           "JobQueue", "Scheduler", "add_reads", "describe", "merge_summaries"]
