"""One small function per subcommand (parser.py's table points at them) and :func:`run`, which gives each the
settings or the library it asked for.

Exit codes: 0 ok, 1 a problem the user can fix (message on stderr), 2 bad usage (or a path that does not exist),
3 the text was indexed but its embedding could not finish (model server down, model missing: the reason is on
stderr; keyword search finds the text, `desktop-memory embed` finishes it later), 130 interrupted.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, TypeVar

from ..config import Settings, settings_path
from ..errors import DatabaseDamaged, UsageError, UserError
from ..library_location import parse_location, schema_backups, shown
from ..models import IndexProgress, SearchFilters
from ..paths import normalise
from ..settings_file import load_settings, reset_settings
from ..settings_keys import unknown_settings
from .output import EMPTY_LIBRARY, ProgressBar, print_stats, print_summary

if TYPE_CHECKING:
    from ..service import MemoryService

_T = TypeVar("_T")
EXIT_NOT_EMBEDDED = 3  # indexed, but vectors could not be made (see the module doc)
WRITING = ("index", "embed", "reembed", "remove", "watch", "compact", "include")  # these say why a write is refused
# a removal a kill interrupted is finished before these write anything (`remove` finishes it itself; the window and
# `watch` through their scheduler): its intent is recorded in the library (issue 30 item 4)
FINISH_REMOVAL_FIRST = ("index", "embed", "reembed", "compact", "include")


def run(args: argparse.Namespace) -> int:
    """Give the command what its table entry asks for, then run it."""
    needs = args.library
    if needs is None:
        code: int = args.func(args)
        return code
    settings = load_settings()  # a broken file stops here with a message (it is never replaced by defaults)
    if needs == "settings":
        code = args.func(args, settings)
        return code
    missing = missing_paths(args.paths) if getattr(args, "paths_must_exist", False) else []
    if missing:  # before anything is opened or recorded: a typo must not leave a "not found" document behind
        raise UsageError("no such file or folder: " + ", ".join(missing))
    if getattr(args, "path_style", None):
        settings = dataclasses.replace(settings, context=dataclasses.replace(settings.context,
                                                                             path_style=args.path_style))
    db = parse_location(args.db) if args.db else settings.resolved_db_location()  # a path, or a server's URL
    undecodable = any("\ud800" <= ch <= "\udfff" for ch in str(db))  # the store names that problem itself
    creates_only_with = getattr(args, "creates_only_with", None)
    if creates_only_with is not None and not getattr(args, creates_only_with):
        needs = "existing"  # nothing named to add: a missing library is said, never made empty
    if needs == "existing" and isinstance(db, Path) and not db.exists() and not undecodable:  # say so, create none
        raise UserError(f"no library at {db}: index a folder first (desktop-memory index FOLDER)"
                        + ("" if args.db else ", or name another library with --db PATH"))
    return _with_library(settings, args)


def _with_library(settings: Settings, args: argparse.Namespace) -> int:
    from ..lock_waits import on_busy_wait

    told: list[str] = []

    def tell(message: str) -> None:  # once per command: a long run may wait its turn many times
        if not told:
            told.append(message)
            print(f"note: {message} (it goes on when it is its turn; Ctrl+C stops)", file=sys.stderr, flush=True)

    stop_telling = on_busy_wait(tell)
    try:
        return _open_and_run(settings, args)
    finally:
        stop_telling()


def _open_and_run(settings: Settings, args: argparse.Namespace) -> int:
    from ..service import MemoryService

    try:
        svc = MemoryService(settings, db_path=args.db)
    except DatabaseDamaged as exc:
        if args.command != "check":
            raise
        for problem in exc.problems:
            print(f"schema: {problem}")
        print(f"the database is damaged: {len(exc.problems)} problem(s)")
        print(exc.advice, file=sys.stderr)
        return 1
    try:
        for notice in svc.take_notices():  # e.g. a data folder made owner-only: one line each
            print(f"note: {notice}", file=sys.stderr)
        if svc.read_only_note and args.command not in WRITING:
            print(f"note: {svc.read_only_note}", file=sys.stderr)  # once per run; writes say why they are refused
        if args.command in FINISH_REMOVAL_FIRST and not svc.read_only_note:
            _finish_removal(svc)
        code: int = args.func(svc, args)
        return code
    finally:
        svc.close()


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


def _finish_removal(svc: MemoryService) -> None:
    pending = svc.pending_removals()
    if pending or svc.erasing_unfinished():
        what = ", ".join(pending) if pending else "removed text"
        print(f"note: finishing an interrupted removal first ({what})", file=sys.stderr)
        bar = ProgressBar(True)
        try:
            svc.finish_interrupted_removal(progress=bar)
        finally:
            bar.finish()


def _empty_note(svc: MemoryService) -> None:
    if not svc.stats().documents:
        print(f"note: {EMPTY_LIBRARY}", file=sys.stderr)


def _filters(args: argparse.Namespace) -> SearchFilters:
    prefix = normalise(args.path_prefix) if args.path_prefix else None
    return SearchFilters(path_prefix=prefix, path_glob=args.path_glob, kinds=tuple(args.kind),
                         modified_since=args.since, modified_until=args.until)


# ---------------------------------------------------------------------------------------------------------------
# commands


def settings_command(args: argparse.Namespace) -> int:
    path = settings_path()
    if args.reset:
        backup = reset_settings(path)
        print(f"settings reset to the defaults; the old file was kept as {backup}" if backup
              else f"no settings file at {path}: the defaults are in use")
        return 0
    load_settings(path)  # a problem raises SettingsError: printed by main(), exit 1
    print(f"{path}: ok" if path.exists() else f"no settings file at {path}: the defaults are in use")
    for sentence in unknown_settings(path):  # a mistyped key leaves its setting at the default: say so
        print(f"note: {sentence}", file=sys.stderr)
    return 0


def mcp(args: argparse.Namespace, settings: Settings) -> int:
    """Serve over stdio; the server opens the database itself, lazily: a missing one is reported per call."""
    from ..mcp_server.server import serve

    return serve(settings, args.db, allow_indexing=args.allow_indexing)


def missing_paths(paths: list[str]) -> list[str]:
    """The named paths that do not exist (a broken symlink exists: it is reported as such when indexed)."""
    return [p for p in paths if not os.path.lexists(os.path.expanduser(p))]


def index(svc: MemoryService, args: argparse.Namespace) -> int:
    bar = ProgressBar(not args.quiet and not args.json)
    summary = _run_with_cancel(lambda c: svc.index_paths(args.paths, progress=bar, cancel=c, force=args.force,
                                                        embed=not args.no_embed, include_excluded=True))
    bar.finish()
    if args.json:
        print(json.dumps(summary.to_dict(), indent=2, ensure_ascii=False))
    else:
        print_summary(summary)
    if summary.cancelled:
        return 130
    return _embedding_stopped(summary.embed_error)


def _embedding_stopped(error: str) -> int:
    """An embedding that could not finish is a failure, said on stderr (exit 3), never a quiet success: the text
    is keyword-searchable already, and `embed` finishes the vectors once the model answers."""
    if not error:
        return 0
    sys.stdout.flush()  # the summary first, then why it is not complete
    print(f"error: embedding stopped: {error}\n  the text is indexed and keyword search finds it; run "
          "`desktop-memory embed` once the model is available", file=sys.stderr)
    return EXIT_NOT_EMBEDDED


def embed(svc: MemoryService, args: argparse.Namespace) -> int:
    if svc.embedding_paused():  # the person asks for vectors: a pause left by the app's Cancel ends here
        svc.set_embedding_paused(False)
    if args.command == "embed":  # the configured model's vectors are built beside another model's (issue 30)
        svc.choose_configured_model()
    bar = ProgressBar(not args.quiet)
    fn = svc.embed_pending if args.command == "embed" else svc.reembed
    summary = _run_with_cancel(lambda c: fn(progress=bar, cancel=c))
    bar.finish()
    print(f"embedded {summary.chunks_embedded} chunks")
    return 130 if summary.cancelled else _embedding_stopped(summary.embed_error)


def search(svc: MemoryService, args: argparse.Namespace) -> int:
    outcome = svc.search_outcome(args.query, backend=args.backend, top_k=args.top_k, filters=_filters(args))
    for note in outcome.notes:
        print(f"note: {note}", file=sys.stderr)
    if not outcome.results:
        _empty_note(svc)
    if args.json:
        print(json.dumps([r.to_dict() for r in outcome.results], indent=2, ensure_ascii=False))
        return 0
    if not outcome.results:
        print("no results")
    for r in outcome.results:
        where = r.location.describe()
        held = f"{r.machine}: " if r.remote else ""  # another machine's file, in a shared library
        print(f"{r.rank:>2}. {held}{r.source}" + (f"  ({where})" if where else ""))
        # the strength first: a strong result may be lifted above weak ones with higher fused scores (searcher.py)
        print(f"    {r.strength} match · score {r.score:.4f} · {r.explain()}")
        snippet = " ".join(r.text.split())
        print(f"    {snippet[:240]}{'…' if len(snippet) > 240 else ''}")
    return 0


def context(svc: MemoryService, args: argparse.Namespace) -> int:
    report, outcome = svc.context_outcome(args.query, args.budget, backend=args.backend, top_k=args.top_k,
                                          filters=_filters(args), include_weak=args.include_weak)
    for note in outcome.notes:
        print(f"note: {note}", file=sys.stderr)
    if not outcome.results:
        _empty_note(svc)
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


def stats(svc: MemoryService, args: argparse.Namespace) -> int:
    st = svc.stats()
    if args.json:
        print(json.dumps(st.to_dict(), indent=2))
    else:
        print_stats(st)
    return 0


def remove(svc: MemoryService, args: argparse.Namespace) -> int:
    """Final: a library folder leaves the library; a folder or file inside one is excluded from it, so watching,
    a re-read or the next start never brings it back (``include`` does)."""
    bar = ProgressBar(not args.quiet)
    roots_before, excluded_before = set(svc.roots()), set(svc.exclusions())
    try:
        n = svc.remove_paths(args.paths, progress=bar, exclude=True)
    finally:
        bar.finish()
    print(f"removed {n} document(s) from the index")
    unregistered = sorted(roots_before - set(svc.roots()))
    excluded = sorted(set(svc.exclusions()) - excluded_before)
    for root in unregistered:
        print(f"{root} is no longer a library folder (`desktop-memory index {root}` adds it again)")
    for path in excluded:
        print(f"{path} is excluded from its library folder: watching and re-reading leave it out; "
              f"`desktop-memory include {path}` brings it back")
    if n or unregistered or excluded:
        return 0
    for path in args.paths:  # nothing changed: a typo, a path outside the library, or one removed before
        full = normalise(path)
        print(f"{full} was removed before (`desktop-memory include {full}` brings it back)" if full in excluded_before
              else f"nothing in the library at {full} (`desktop-memory list` shows what is indexed)", file=sys.stderr)
    return 0 if all(normalise(p) in excluded_before for p in args.paths) else 1


def include(svc: MemoryService, args: argparse.Namespace) -> int:
    """Include again what ``remove`` excluded (at or below each path), then read what is still on disk."""
    lifted = svc.include_paths(args.paths)
    for path in lifted:
        print(f"included again: {path}")
    if not lifted:
        print("nothing there was excluded (`desktop-memory list` shows the exclusions)", file=sys.stderr)
    present = [p for p in args.paths if os.path.lexists(os.path.expanduser(p))]
    if not present:
        return 0 if lifted else 1
    bar = ProgressBar(not args.quiet)
    summary = _run_with_cancel(lambda c: svc.index_paths(present, progress=bar, cancel=c, include_excluded=True))
    bar.finish()
    print_summary(summary)
    return 130 if summary.cancelled else 0


def list_documents(svc: MemoryService, args: argparse.Namespace) -> int:
    documents = svc.documents()
    listed = [d for d in documents if args.status is None or d.status == args.status]
    if not documents:
        print(f"note: {EMPTY_LIBRARY}", file=sys.stderr)
    excluded = svc.exclusions() if args.status in (None, "excluded") else []
    if args.json:
        print(json.dumps([vars(d) for d in listed] + [{"path": p, "status": "excluded"} for p in excluded],
                         indent=2, ensure_ascii=False))
    else:
        for d in listed:
            extra = f"  {d.error}" if d.error else ""
            print(f"{d.status:<8} {d.chunks:>5} chunks  {d.path}{extra}")
        for p in excluded:
            print(f"excluded {'-':>5} chunks  {p}  (removed from its library folder; `include` brings it back)")
    return 0


def check(svc: MemoryService, args: argparse.Namespace) -> int:
    bar = ProgressBar(not args.quiet)
    t0 = time.monotonic()

    def step(name: str, done: int, steps: int) -> None:
        bar(IndexProgress(phase="check", current=name, files_done=done, files_total=steps,
                          elapsed_s=time.monotonic() - t0))

    try:
        problems = svc.check(progress=step, full=args.full)
    finally:
        bar.finish()
    for p in problems:
        print(p)
    skipped = " (read-only: the full-text index self-check needs write access and was skipped)" if args.full else ""
    print(("ok" + (skipped if svc.read_only_note else "")) if not problems else f"{len(problems)} problem(s)")
    return 0 if not problems else 1


def compact(svc: MemoryService, args: argparse.Namespace) -> int:
    bar = ProgressBar(not args.quiet)
    try:
        before, after = svc.compact(progress=bar)  # Ctrl+C: SQLite rolls the VACUUM back, the library is intact
    finally:
        bar.finish()
    print(f"compacted {shown(svc.db_path)}: {before / 1e6:.1f} MB → {after / 1e6:.1f} MB; removed text is erased")
    for backup in schema_backups(svc.db_path):
        print(f"note: {backup} is the copy made before a schema upgrade and still holds the library as it was "
              "then; delete it once you no longer need it", file=sys.stderr)
    return 0


PAUSED_HINT = "resume with `desktop-memory embed` or Resume in the app"


def _start_embedding(svc: MemoryService, no_embed: bool) -> None:
    """Passages read earlier (--no-embed, an interrupted run) are embedded in the background, unless the person
    paused embedding (Cancel in the app, kept in the library): then the watch says so, and how to resume."""
    if no_embed:
        return
    from ..jobs import AUTO

    pending = svc.stats().pending_vectors
    now = time.strftime("%H:%M:%S")
    if svc.scheduler.paused:  # nothing is embedded, by this watch either, until the person resumes
        waiting = f": {pending} passages without vectors (keyword search finds them)" if pending else ""
        print(f"{now} embedding is paused (Cancel in the app){waiting}; {PAUSED_HINT}", flush=True)
        return
    if pending and svc.scheduler.embed(source=AUTO) is not None:
        print(f"{now} embedding {pending} passages without vectors", flush=True)


def watch(svc: MemoryService, args: argparse.Namespace) -> int:
    """Watch in the foreground, a line per update, until Ctrl+C (or SIGTERM): then stop cleanly, exit 0."""
    from ..watch import Watcher, WatchUpdate

    folders = [normalise(f) for f in args.folders] or None
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
        _start_embedding(svc, args.no_embed)
        while not stop.wait(5.0) and watcher.running:  # a wake-up every 5 s: no measurable CPU
            pass
    finally:
        watcher.stop()
        stopped = svc.scheduler.stop()  # an embedding stops within one slice; what it made is kept
        for sig, handler in old.items():
            signal.signal(sig, handler)
    said = f" (stopped {stopped}; what was done is kept)" if stopped else ""
    print(f"{time.strftime('%H:%M:%S')} stopped watching{said}", flush=True)
    return 0
