"""Command-line interface over the same core as the GUI. No Qt import.

    desktop-memory [--db PATH] index PATH... | search QUERY | context QUERY | stats | remove PATH... | watch | ...

A query that starts with "-" goes after "--" (``desktop-memory search -- -hugo``), as for any Unix command.
Numbers and dates are checked here with messages that say what is allowed; the query and filters are made valid
for SQLite in ``retrieve/filters.py`` (the one place for outside text).

Exit codes: 0 ok, 1 a problem the user can fix (message on stderr), 2 bad usage, 130 interrupted.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import multiprocessing
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from types import FrameType
from typing import TYPE_CHECKING, NoReturn, TypeVar

from . import APP_NAME, __version__
from .cli_servers import COMMANDS as SERVER_COMMANDS
from .cli_servers import add_server_parsers, run_server_command
from .config import BACKENDS, MAX_TOP_K, load_settings, reset_settings, settings_path
from .context.paths import PATH_STYLES
from .errors import UserError
from .models import DOC_KINDS, IndexProgress, IndexSummary, SearchFilters

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

    from .service import MemoryService

_T = TypeVar("_T")
MAX_AGE_DAYS = 100 * 366  # relative dates reach back a century at most
SEARCH_EPILOG = "A query that starts with '-' goes after --, e.g.: desktop-memory search -- -hugo"


class _Parser(argparse.ArgumentParser):
    """argparse with a hint when a query that starts with '-' was taken for an option."""

    def error(self, message: str) -> NoReturn:
        if self.prog.split()[-1] in ("search", "context") and (
            "unrecognized arguments: -" in message or "required: query" in message
            or "expected one argument" in message or "ignored explicit argument" in message
        ):
            message += (f"\n  a query that starts with '-' goes after --, e.g.: {self.prog} -- -hugo")
        super().error(message)

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        super()._print_message(valid_arg(message), file)  # an undecodable argument is echoed, not a crash


def _parse_when(text: str) -> float:
    """``2024-05-01``, ``2024-05-01T10:00`` or a relative ``7d`` / ``12h`` / ``2w`` → unix seconds."""
    text = valid_arg(text).strip()
    units = {"d": 86400, "h": 3600, "w": 604800}
    if text[:-1].isdigit() and text[-1:] in units:
        digits = text[:-1]
        if len(digits) > 9 or int(digits) * units[text[-1]] > MAX_AGE_DAYS * 86400:
            raise argparse.ArgumentTypeError(f"{_short(text)} reaches back more than 100 years; use a smaller number "
                                             "or a date like 2024-05-01")
        return time.time() - int(digits) * units[text[-1]]
    try:
        return dt.datetime.fromisoformat(text).timestamp()
    except (ValueError, OverflowError, OSError) as exc:
        raise argparse.ArgumentTypeError(f"not a date: {_short(text)} (use 2024-05-01 or 7d)") from exc


def _short(text: str) -> str:
    return repr(text) if len(text) <= 40 else f"{text[:20]!r}… ({len(text)} characters)"


def valid_arg(text: str) -> str:
    """An argument with bytes the terminal's encoding could not decode shown as U+FFFD (for messages/dates)."""
    return text.encode("utf-8", "replace").decode("utf-8") if any("\ud800" <= c <= "\udfff" for c in text) else text


def _bounded_int(lo: int, hi: int) -> Callable[[str], int]:
    """An argparse type: a whole number within lo..hi, or a message saying the range."""

    def parse(text: str) -> int:
        text = valid_arg(text).strip()
        if not re.fullmatch(r"[+-]?\d{1,18}", text):
            if re.fullmatch(r"[+-]?\d+", text):
                raise argparse.ArgumentTypeError(f"{_short(text)} is too large (at most {hi:,})")
            raise argparse.ArgumentTypeError(f"not a whole number: {_short(text)}")
        value = int(text)
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{value:,} is out of range ({lo:,} to {hi:,})")
        return value

    parse.__name__ = "number"
    return parse


def _add_search_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", help="what to look for (free text; quotes and operators are just text; a query that "
                   "starts with '-' goes after --)")
    p.add_argument("--top-k", "-k", type=_bounded_int(1, MAX_TOP_K), default=None,
                   help=f"how many passages, 1 to {MAX_TOP_K} (default from settings: 10)")
    p.add_argument("--backend", choices=BACKENDS, default=None, help="retrieval backend (default: hybrid)")
    p.add_argument("--path", dest="path_prefix", default=None, help="only files under this folder/path prefix")
    p.add_argument("--glob", dest="path_glob", default=None, help="only files whose path matches this glob")
    p.add_argument("--kind", action="append", choices=DOC_KINDS, default=[], help="only this file kind (repeatable)")
    p.add_argument("--since", type=_parse_when, default=None, help="modified since (2024-05-01 or 7d)")
    p.add_argument("--until", type=_parse_when, default=None, help="modified until")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=APP_NAME, description="A private, searchable memory of your files.", epilog=SEARCH_EPILOG,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"{APP_NAME} {__version__}")
    parser.add_argument("--db", default=None, help="database file (default: in your user data folder)")
    parser.add_argument("--smoke", action="store_true", help="self-check: store, sqlite-vec, model, one search")
    sub = parser.add_subparsers(dest="command")

    p = sub.add_parser("index", help="index files and folders (incremental)")
    p.add_argument("paths", nargs="+")
    p.add_argument("--force", action="store_true", help="re-read files even if unchanged")
    p.add_argument("--no-embed", action="store_true", help="keyword index only; embed later with `embed`")
    p.add_argument("--json", action="store_true")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")

    _add_search_args(sub.add_parser("search", help="search the index", epilog=SEARCH_EPILOG,
                     formatter_class=argparse.RawDescriptionHelpFormatter))
    p = sub.add_parser("context", help="build a prompt-context block under a token budget", epilog=SEARCH_EPILOG,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_search_args(p)
    p.add_argument("--budget", type=_bounded_int(16, 10_000_000), default=None, help="token budget (default 2048)")
    p.add_argument("--include-weak", action="store_true",
                   help="pack weak matches too (left out by default: a query with no strong match packs nothing)")
    p.add_argument("--path-style", choices=PATH_STYLES, default=None,
                   help="how [Source: ...] names files: relative to the indexed folder (default), absolute, name")

    p = sub.add_parser("stats", help="documents, chunks, vectors")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("remove", help="remove files or folders from the index (files on disk untouched)")
    p.add_argument("paths", nargs="+")

    p = sub.add_parser("embed", help="embed chunks still waiting for vectors")
    p.add_argument("--quiet", "-q", action="store_true")
    p = sub.add_parser("reembed", help="drop all vectors and embed again with the configured model")
    p.add_argument("--quiet", "-q", action="store_true")

    p = sub.add_parser("list", help="indexed documents with status")
    p.add_argument("--status", default=None, help="only this status (indexed, skipped, failed)")
    p.add_argument("--json", action="store_true")

    sub.add_parser("check", help="verify the database's integrity")
    sub.add_parser("compact", help="compact and erase: rebuild the database so removed text is gone from the file")

    p = sub.add_parser("watch", help="keep folders in sync: index changes as they happen (Ctrl+C stops)")
    p.add_argument("folders", nargs="*", help="folders to watch (default: every folder in the library); "
                                                "one not in the library yet is indexed first")
    p.add_argument("--no-embed", action="store_true", help="keyword index only; embed later with `embed`")

    p = sub.add_parser("mcp", help="serve the library to chat apps and agents (Model Context Protocol, stdio)",
                       description="Run an MCP server over stdio for Claude Desktop, VS Code, Cursor and other MCP "
                       "clients: tools search, get_context, get_passage and list_sources (read-only). See the "
                       "README for the client configuration.")
    p.add_argument("--db", default=argparse.SUPPRESS, help="database file (default: the app's)")
    p.add_argument("--allow-indexing", action="store_true",
                   help="also offer index_path, limited to folders already in the library")

    p = sub.add_parser("settings", help="check the settings file, or reset it (keeping a dated backup)")
    p.add_argument("--reset", action="store_true", help="move the settings file aside; the defaults apply")
    add_server_parsers(sub)  # embedder, rerank, api-key (cli_servers.py)

    try:
        from desktop_memory_bench.command import add_bench_parser
    except ImportError:  # the benchmark is a developer tool, not part of the app (or the bundle)
        p = sub.add_parser("bench", help="retrieval benchmark (needs: pip install 'desktop-memory[bench]')",
                           add_help=False)
        p.add_argument("rest", nargs=argparse.REMAINDER)
        p.set_defaults(bench_func=_bench_missing)
    else:
        add_bench_parser(sub)
    return parser


BENCH_INSTALL_HINT = ("The benchmark is a developer tool that is not installed with the app. Install it from a "
                      "source checkout with: pip install 'desktop-memory[bench]' (adds psutil and ir-measures).")


def _bench_missing(args: argparse.Namespace) -> int:
    raise UserError(BENCH_INSTALL_HINT)


class ProgressBar:
    """One updating line on stderr when it is a terminal; silent otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self._width = 0

    def __call__(self, p: IndexProgress) -> None:
        if not self.enabled:
            return
        if p.phase == "embed":
            total = max(p.chunks_to_embed, 1)
            frac = p.chunks_embedded / total
            eta = f" ETA {int(p.eta_s)}s" if p.eta_s is not None else ""
            text = f"embedding {p.chunks_embedded}/{p.chunks_to_embed} chunks ({p.chunks_per_s:.0f}/s){eta}"
        elif p.phase == "extract":
            total = max(p.files_total, 1)
            frac = p.files_done / total
            text = f"reading {p.files_done}/{p.files_total} files · {p.chunks_written} chunks"
        else:
            frac, text = 0.0, p.phase
        bar = "#" * int(frac * 24)
        line = f"\r[{bar:<24}] {text}"
        pad = max(0, self._width - len(line))
        self._width = len(line)
        sys.stderr.write(line + " " * pad)
        sys.stderr.flush()

    def finish(self) -> None:
        if self.enabled and self._width:
            sys.stderr.write("\r" + " " * self._width + "\r")
            sys.stderr.flush()


def _print_summary(summary: IndexSummary, out: SupportsWrite[str] = sys.stdout) -> None:
    print(
        f"indexed {summary.indexed}, unchanged {summary.unchanged}, skipped {summary.skipped}, "
        f"failed {summary.failed}, removed {summary.removed} · {summary.chunks_added} chunks added, "
        f"{summary.chunks_embedded} embedded"
        + (f" ({summary.vectors_reused} unchanged kept their vectors)" if summary.vectors_reused else "")
        + f", {summary.duplicates_collapsed} duplicates collapsed "
        f"· {summary.elapsed_s:.1f}s",
        file=out,
    )
    if summary.cancelled:
        print("cancelled: everything committed so far is kept; run again to finish.", file=out)
    if summary.embed_error:
        print(f"embedding stopped: {summary.embed_error}\n  keyword search works; run `desktop-memory embed` later.",
              file=out)
    for o in summary.outcomes:
        if o.status == "failed":
            print(f"  failed  {o.path}: {o.reason}", file=out)
    skipped = [o for o in summary.outcomes if o.status == "skipped"]
    for o in skipped[:50]:
        print(f"  skipped {o.path}: {o.reason}", file=out)
    if len(skipped) > 50:
        print(f"  … and {len(skipped) - 50} more skipped (see `desktop-memory list --status skipped`)", file=out)


def _filters(args: argparse.Namespace) -> SearchFilters:
    import os

    prefix = os.path.abspath(os.path.expanduser(args.path_prefix)) if args.path_prefix else None
    return SearchFilters(path_prefix=prefix, path_glob=args.path_glob, kinds=tuple(args.kind),
                         modified_since=args.since, modified_until=args.until)


def _run_with_cancel(fn: Callable[[threading.Event], _T]) -> _T:
    """Run long work so Ctrl-C sets a cancel flag (the job stops cleanly between documents/batches)."""
    cancel = threading.Event()

    def handler(signum: int, frame: FrameType | None) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()
        sys.stderr.write("\ncancelling after the current file… (Ctrl-C again to abort)\n")

    old = signal.signal(signal.SIGINT, handler)
    try:
        return fn(cancel)
    finally:
        signal.signal(signal.SIGINT, old)


def _settings_command(args: argparse.Namespace) -> int:
    path = settings_path()
    if args.reset:
        backup = reset_settings(path)
        print(f"settings reset to the defaults; the old file was kept as {backup}" if backup
              else f"no settings file at {path}: the defaults are in use")
        return 0
    load_settings(path)  # a problem raises SettingsError: printed by main(), exit 1
    print(f"{path}: ok" if path.exists() else f"no settings file at {path}: the defaults are in use")
    return 0


def run(args: argparse.Namespace) -> int:
    from .service import MemoryService
    from .store.migrations import DatabaseDamaged

    if args.command == "settings":
        return _settings_command(args)
    if args.command in SERVER_COMMANDS:
        return run_server_command(args)
    settings = load_settings()  # a broken file stops here with a message (it is never replaced by defaults)
    if args.command == "bench":
        code: int = args.bench_func(args)
        return code
    if getattr(args, "path_style", None):
        settings = dataclasses.replace(settings, context=dataclasses.replace(settings.context,
                                                                             path_style=args.path_style))
    if args.command == "mcp":  # opens the database itself, lazily: a missing one is reported per call
        from .mcp_server.server import serve

        return serve(settings, args.db, allow_indexing=args.allow_indexing)
    try:
        svc = MemoryService(settings, db_path=args.db)
    except DatabaseDamaged as exc:
        if args.command != "check":
            raise
        for problem in exc.problems:
            print(f"schema: {problem}")
        print(f"the database is damaged: {len(exc.problems)} problem(s)")
        print(str(exc).split(". Run `desktop-memory check` for details, or ", 1)[-1], file=sys.stderr)
        return 1
    try:
        for notice in svc.take_notices():  # e.g. a data folder made owner-only: one line each
            print(f"note: {notice}", file=sys.stderr)
        if svc.read_only_note and args.command not in ("index", "embed", "reembed", "remove", "watch", "compact"):
            print(f"note: {svc.read_only_note}", file=sys.stderr)  # once per run; writes say why they are refused
        return _dispatch(svc, args)
    finally:
        svc.close()


def _dispatch(svc: MemoryService, args: argparse.Namespace) -> int:
    cmd = args.command
    if cmd == "index":
        bar = ProgressBar(not args.quiet and not args.json)
        summary = _run_with_cancel(lambda c: svc.index_paths(args.paths, progress=bar, cancel=c, force=args.force,
                                                            embed=not args.no_embed))
        bar.finish()
        if args.json:
            print(json.dumps(summary.to_dict(), indent=2, ensure_ascii=False))
        else:
            _print_summary(summary)
        return 130 if summary.cancelled else 0
    if cmd in ("embed", "reembed"):
        bar = ProgressBar(not args.quiet)
        fn = svc.embed_pending_summary if cmd == "embed" else svc.reembed
        summary = _run_with_cancel(lambda c: fn(progress=bar, cancel=c))
        bar.finish()
        print(f"embedded {summary.chunks_embedded} chunks")
        if summary.embed_error:
            print(f"error: {summary.embed_error}", file=sys.stderr)
            return 1
        return 0
    if cmd == "search":
        outcome = svc.search_outcome(args.query, backend=args.backend, top_k=args.top_k, filters=_filters(args))
        for note in outcome.notes:
            print(f"note: {note}", file=sys.stderr)
        if args.json:
            print(json.dumps([r.to_dict() for r in outcome.results], indent=2, ensure_ascii=False))
            return 0
        if not outcome.results:
            print("no results")
        for r in outcome.results:
            where = r.location.describe()
            print(f"{r.rank:>2}. {r.source}" + (f"  ({where})" if where else ""))
            print(f"    score {r.score:.4f} · {r.explain()}")
            snippet = " ".join(r.text.split())
            print(f"    {snippet[:240]}{'…' if len(snippet) > 240 else ''}")
        return 0
    if cmd == "context":
        report, outcome = svc.context_outcome(args.query, args.budget, backend=args.backend, top_k=args.top_k,
                                              filters=_filters(args), include_weak=args.include_weak)
        for note in outcome.notes:
            print(f"note: {note}", file=sys.stderr)
        if not report.items and outcome.results and outcome.weak and not args.include_weak:
            print("note: no strong matches; nothing packed (--include-weak packs the weak ones)", file=sys.stderr)
        if args.json:
            print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
        else:
            sys.stdout.write(report.text + "\n")
            dropped = f", {len(report.dropped)} passage(s) did not fit" if report.dropped else ""
            print(f"[{report.tokens_used}/{report.budget} tokens, {len(report.items)} passage(s){dropped}]",
                  file=sys.stderr)
        return 0
    if cmd == "stats":
        st = svc.stats()
        if args.json:
            print(json.dumps(st.to_dict(), indent=2))
        else:
            docs = ", ".join(f"{k} {v}" for k, v in sorted(st.documents.items())) or "none"
            print(f"database   {st.db_path} ({st.db_bytes / 1e6:.1f} MB)")
            print(f"documents  {docs}")
            print(f"chunks     {st.chunks}")
            print(f"vectors    {st.vectors} ({st.pending_vectors} waiting)")
            print(f"model      {st.model_id or '-'}" + (f" ({st.dim}-d)" if st.dim else ""))
        return 0
    if cmd == "remove":
        n = svc.remove_paths(args.paths)
        print(f"removed {n} document(s) from the index")
        return 0
    if cmd == "list":
        listed = [d for d in svc.documents() if args.status is None or d.status == args.status]
        if args.json:
            print(json.dumps([vars(d) for d in listed], indent=2, ensure_ascii=False))
        else:
            for d in listed:
                extra = f"  {d.error}" if d.error else ""
                print(f"{d.status:<8} {d.chunks:>5} chunks  {d.path}{extra}")
        return 0
    if cmd == "watch":
        return _watch(svc, args)
    if cmd == "check":
        problems = svc.check()
        for p in problems:
            print(p)
        skipped = " (read-only: the full-text index self-check needs write access and was skipped)"
        print(("ok" + (skipped if svc.read_only_note else "")) if not problems else f"{len(problems)} problem(s)")
        return 0 if not problems else 1
    if cmd == "compact":
        before, after = svc.compact()
        print(f"compacted {svc.db_path}: {before / 1e6:.1f} MB → {after / 1e6:.1f} MB; removed text is erased")
        for backup in sorted(svc.db_path.parent.glob(f"{svc.db_path.name}.bak-v*")):
            print(f"note: {backup} is the copy made before a schema upgrade and still holds the library as it was "
                  "then; delete it once you no longer need it", file=sys.stderr)
        return 0
    raise AssertionError(cmd)


def _watch(svc: MemoryService, args: argparse.Namespace) -> int:
    """Watch in the foreground, a line per update, until Ctrl+C (or SIGTERM): then stop cleanly, exit 0."""
    import os

    from .watch import Watcher, WatchUpdate

    folders = [os.path.abspath(os.path.expanduser(f)) for f in args.folders] or None
    for folder in folders or []:
        if not os.path.isdir(folder):
            raise UserError(f"not a folder: {folder}")
    if folders is None and not svc.roots():
        raise UserError("the library has no folders yet: name one (`desktop-memory watch FOLDER`) or index one")
    stop = threading.Event()

    def show(update: WatchUpdate) -> None:
        print(f"{time.strftime('%H:%M:%S')} {update.message}", flush=True)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    watcher = Watcher(svc, folders=folders, on_update=show, embed=not args.no_embed)
    old = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        watcher.start()
        while not stop.wait(5.0) and watcher.running:  # a wake-up every 5 s: no measurable CPU
            pass
    finally:
        watcher.stop()
        for sig, handler in old.items():
            signal.signal(sig, handler)
    print(f"{time.strftime('%H:%M:%S')} stopped watching", flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    multiprocessing.freeze_support()
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.smoke:
        from .smoke import run_smoke

        return run_smoke(gui=False)
    if not args.command:
        parser.print_help()
        return 2
    try:
        return run(args)
    except UserError as exc:
        print(f"error: {valid_arg(str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
