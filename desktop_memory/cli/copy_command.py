"""``desktop-memory copy --from A --to B``: move a library between a SQLite file and a PostgreSQL database (either
way, or file to file) without re-embedding (library_copy.py does the work; this is its command line)."""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from typing import Any

from ..config import Settings
from ..errors import Cancelled
from ..library_copy_job import copy_library
from ..library_location import parse_location, shown
from ..machine import this_machine
from ..models import IndexProgress
from .output import ProgressBar


def add_copy_parser(sub: argparse._SubParsersAction[Any]) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "copy", help="copy a library to another place (a database file or postgresql:// URL), without re-embedding",
        description="Copy documents, passages, vectors of every model, folders (with their machine) and "
        "exclusions from one library to another. Interrupted, run it again: it goes on where it stopped.")
    p.set_defaults(func=copy_command, library="settings")
    p.add_argument("--from", dest="source", required=True, help="the library to copy: a file or postgresql:// URL")
    p.add_argument("--to", dest="target", required=True,
                   help="where to copy it: a file or postgresql:// URL (created when missing)")
    p.add_argument("--allow-other-model", action="store_true",
                   help="copy into a library that already uses another embedding model (the copied vectors are "
                        "kept beside its own)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar or progress lines")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    return p


def copy_command(args: argparse.Namespace, settings: Settings) -> int:
    source, target = parse_location(args.source), parse_location(args.target)
    bar = ProgressBar(not args.quiet and not args.json)
    started = time.monotonic()

    def progress(done: int, total: int) -> None:
        bar(IndexProgress(phase="copy", files_done=done, files_total=total, elapsed_s=time.monotonic() - started))

    cancel = threading.Event()
    try:
        summary = copy_library(source, target, machine=this_machine(settings), settings=settings,
                               allow_other_model=args.allow_other_model, progress=progress, cancel=cancel)
    except Cancelled as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:  # the slice being written is rolled back whole; what was committed stays
        print("interrupted: run the same copy again to go on where it stopped", file=sys.stderr)
        return 130
    finally:
        bar.finish()
    if args.json:
        print(json.dumps({"from": shown(source), "to": shown(target), **summary.to_dict()}, indent=2))
        return 0
    vectors = sum(summary.vectors.values())
    print(f"copied {summary.documents:,} document(s), {summary.chunks:,} passage(s) and {vectors:,} vector(s) "
          f"from {shown(source)} to {shown(target)}"
          + (f"; {summary.unchanged:,} were already there" if summary.unchanged else "")
          + f"; {summary.folders} folder(s), {summary.exclusions} exclusion(s)")
    return 0
