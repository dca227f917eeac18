"""Command-line interface over the same core as the GUI. No Qt import.

    desktop-memory [--db PATH] index PATH... | search QUERY | context QUERY | stats | remove PATH... | watch | ...

parser.py is the table of commands (options, help, and the function each runs), subcommands.py the commands,
output.py what they print. A query that starts with "-" goes after "--" (``desktop-memory search -- -hugo``), as for
any Unix command. The query and filters are made valid for SQLite in ``retrieve/filters.py``.

Exit codes: 0 ok (also when the reader of a pipe stops early: ``| head``), 1 a problem the user can fix (message on
stderr), 2 bad usage, 130 interrupted.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Sequence

from ..errors import UsageError, UserError
from ..harness import BENCH_INSTALL_HINT
from .parser import _bounded_int, _parse_when, build_parser, valid_arg
from .subcommands import run

__all__ = ["BENCH_INSTALL_HINT", "_bounded_int", "_parse_when", "build_parser", "main", "valid_arg"]


def main(argv: Sequence[str] | None = None) -> int:
    multiprocessing.freeze_support()
    parser = build_parser()
    args = parser.parse_args(argv)
    extra = getattr(args, "extra", None)  # api-key's catch-all takes what follows its name, a trailing --json too
    if extra and "--json" in extra:
        args.extra, args.json = [a for a in extra if a != "--json"], True
    if args.smoke:
        from ..smoke import run_smoke

        return run_smoke(gui=False)
    if not args.command:
        parser.print_help()
        return 2
    try:
        if getattr(args, "query", None) == "-":
            args.query = query_from_stdin()
        code = run(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return code
    except BrokenPipeError:
        return _reader_went_away()
    except UsageError as exc:
        print(f"error: {valid_arg(str(exc))}", file=sys.stderr)
        return 2
    except UserError as exc:
        print(f"error: {valid_arg(str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def query_from_stdin() -> str:
    """``search -`` / ``context -``: the query is what comes on stdin (``pbpaste | desktop-memory context -``), as
    UTF-8 (bytes that are not become U+FFFD), its ends trimmed; nothing there is bad usage."""
    if sys.stdin is None:
        raise UsageError("no query on stdin: '-' reads the query from standard input")
    if sys.stdin.isatty():
        print("reading the query from stdin (end it with Ctrl+D)", file=sys.stderr)
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode("utf-8", "replace")
    query = data.decode("utf-8", "replace").strip()
    if not query:
        raise UsageError("no query on stdin: '-' reads the query from standard input, and it was empty")
    return query


def _reader_went_away() -> int:
    """``desktop-memory list | head``: the reader has what it wanted. End quietly with 0, as grep and git do in a
    pipeline, and point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return 0
