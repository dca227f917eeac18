"""``--json`` for the commands whose plain output is written for a person (remove, embed, reembed, check, compact,
settings, embedder, rerank, api-key): the same work, the result as one JSON document on stdout. Progress and notes
stay on stderr, so ``… --json | jq`` reads only the result. The plain commands are untouched (subcommands.py,
servers.py); parser.py picks one or the other with :func:`json_or`.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..config import settings_path
from ..library_location import schema_backups, shown
from ..settings_file import load_settings, reset_settings
from ..settings_keys import unknown_settings
from . import subcommands

if TYPE_CHECKING:
    from ..service import MemoryService

# an embedding that could not finish: the plain command's exit code for it (3 once the exit-code work is in)
EXIT_NOT_EMBEDDED: int = getattr(subcommands, "EXIT_NOT_EMBEDDED", 1)


def json_or(plain: Callable[..., int], as_json: Callable[..., int]) -> Callable[..., int]:
    """The command table's function: ``as_json`` with ``--json``, else ``plain`` (same arguments)."""

    def pick(*call: Any) -> int:
        args = next(a for a in call if isinstance(a, argparse.Namespace))
        extra = getattr(args, "extra", None)  # `api-key status rerank --json`: a REMAINDER swallows options after it
        if isinstance(extra, list) and "--json" in extra:
            args.extra = [a for a in extra if a != "--json"]
            args.json = True
        return as_json(*call) if getattr(args, "json", False) else plain(*call)

    pick.__name__ = getattr(plain, "__name__", "command")
    return pick


def _print(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False))


def remove_json(svc: MemoryService, args: argparse.Namespace) -> int:
    """As the plain ``remove``: final (a library folder leaves, a path inside one is excluded)."""
    roots_before, excluded_before = set(svc.roots()), set(svc.exclusions())
    n = svc.remove_paths(args.paths, exclude=True)
    _print({"removed_documents": n, "paths": list(args.paths),
            "unregistered_folders": sorted(roots_before - set(svc.roots())),
            "excluded": sorted(set(svc.exclusions()) - excluded_before)})
    return 0


def include_json(svc: MemoryService, args: argparse.Namespace) -> int:
    """As the plain ``include``: lift the exclusions, then read what is still on disk."""
    lifted = svc.include_paths(args.paths)
    present = [p for p in args.paths if os.path.lexists(os.path.expanduser(p))]
    summary = (subcommands._run_with_cancel(lambda c: svc.index_paths(present, cancel=c, include_excluded=True))
               if present else None)
    _print({"included_again": lifted, "index": summary.to_dict() if summary else None})
    if summary is not None and summary.cancelled:
        return 130
    return 0 if (lifted or present) else 1


def embed_json(svc: MemoryService, args: argparse.Namespace) -> int:
    if svc.embedding_paused():  # as the plain command: asking for vectors ends a pause left by the app's Cancel
        svc.set_embedding_paused(False)
    fn = svc.embed_pending if args.command == "embed" else svc.reembed
    summary = subcommands._run_with_cancel(lambda c: fn(cancel=c))
    _print(summary.to_dict())
    if summary.cancelled:
        return 130
    if summary.embed_error:
        print(f"error: embedding stopped: {summary.embed_error}", file=sys.stderr)
        return EXIT_NOT_EMBEDDED
    return 0


def check_json(svc: MemoryService, args: argparse.Namespace) -> int:
    problems = svc.check(full=args.full)
    read_only = bool(svc.read_only_note)
    _print({"ok": not problems, "problems": problems, "full": bool(args.full),
            "fts_self_check_skipped": bool(args.full and read_only)})
    return 0 if not problems else 1


def compact_json(svc: MemoryService, args: argparse.Namespace) -> int:
    before, after = svc.compact()
    backups = [str(p) for p in schema_backups(svc.db_path)]
    _print({"database": shown(svc.db_path), "bytes_before": before, "bytes_after": after,
            "schema_backups": backups})
    return 0


def settings_json(args: argparse.Namespace) -> int:
    path = settings_path()
    if args.reset:
        backup = reset_settings(path)
        _print({"path": str(path), "reset": True, "backup": str(backup) if backup else None})
        return 0
    settings = load_settings(path)  # a problem raises SettingsError: said on stderr, exit 1, no JSON
    _print({"path": str(path), "exists": path.exists(), "ok": True, "settings": settings.to_dict(),
            "ignored": unknown_settings(path)})
    return 0


def server_json(args: argparse.Namespace) -> int:
    """embedder / rerank / api-key: the command runs as usual, its sentences collected into ``messages``; the
    result is the settings it left (or the key's status, never the key)."""
    from .servers import run_server_command

    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        code = run_server_command(args)
    messages = [line for line in said.getvalue().splitlines() if line.strip()]
    if args.command == "api-key":
        from ..api_keys import key_status

        _print({"name": args.name, "status": key_status(args.name), "messages": messages})
        return code
    settings = load_settings()
    if args.command == "embedder":
        _print({"embedder": dataclasses.asdict(settings.embedder), "messages": messages})
    else:
        s = settings.search
        _print({"rerank": {"on": s.rerank, "url": s.rerank_url, "model": s.rerank_model, "depth": s.rerank_depth,
                           "timeout_s": s.rerank_timeout_s}, "messages": messages})
    return code
