"""The command table: every subcommand with its options (each with help text) and the function that runs it.

Each subparser sets ``func`` (the command, in subcommands.py) and ``library``: what it needs before it runs —
``None``: nothing (``func(args)``); ``"settings"``: the settings (``func(args, settings)``); ``"existing"``: a library
that exists (``func(svc, args)``; a missing one is an error and nothing is created); ``"create"``: a library it may
create (``func(svc, args)``; with ``creates_only_with=NAME`` only when that argument names something, as
``watch FOLDER`` indexes the folder first, while a bare ``watch`` needs an existing library).
Numbers and dates are checked here with messages that say what is allowed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

from .. import APP_NAME, __version__
from ..config import BACKENDS, MAX_TOP_K
from ..context.paths import PATH_STYLES
from ..harness import BENCH_INSTALL_HINT, CLI_COMMANDS, find
from ..models import DOC_KINDS
from . import results as r
from . import subcommands as c
from .copy_command import add_copy_parser
from .paths import paths as paths_command
from .servers import add_server_parsers, run_server_command

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

MAX_AGE_DAYS = 100 * 366  # relative dates reach back a century at most
SEARCH_EPILOG = "A query that starts with '-' goes after --, e.g.: desktop-memory search -- -hugo"
JSON_HELP = "machine-readable output (JSON on stdout)"
EXIT_CODES = ("exit codes: 0 ok · 1 a problem you can fix (said on stderr) · 2 bad usage · 3 indexed, but the "
              "embedding could not finish (model server down, model missing: keyword search finds the text; "
              "`embed` finishes it) · 130 interrupted")


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
                   "starts with '-' goes after --; a lone - reads the query from stdin)")
    p.add_argument("--top-k", "-k", type=_bounded_int(1, MAX_TOP_K), default=None,
                   help=f"how many passages, 1 to {MAX_TOP_K} (default from settings: 10)")
    p.add_argument("--backend", choices=BACKENDS, default=None, help="retrieval backend (default: hybrid)")
    p.add_argument("--path", dest="path_prefix", default=None,
                   help="only files in this folder (or this file itself); notes2/ is not in notes/")
    p.add_argument("--glob", dest="path_glob", default=None, help="only files whose path matches this glob")
    p.add_argument("--kind", action="append", choices=DOC_KINDS, default=[], help="only this file kind (repeatable)")
    p.add_argument("--since", type=_parse_when, default=None, help="modified since (2024-05-01 or 7d)")
    p.add_argument("--until", type=_parse_when, default=None, help="modified until (2024-05-01 or 7d)")
    p.add_argument("--json", action="store_true", help=JSON_HELP)


def _command(sub: argparse._SubParsersAction[Any], name: str, func: Callable[..., int], library: str | None,
             help: str, **kw: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(name, help=help, **kw)
    p.set_defaults(func=func, library=library)
    return p


def _add_json(p: argparse.ArgumentParser, plain: Callable[..., int], as_json: Callable[..., int]) -> None:
    """``--json`` for a command whose plain output is sentences (results.py prints the same result as JSON)."""
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=r.json_or(plain, as_json))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=APP_NAME, description="A private, searchable memory of your files.",
                     epilog=f"{SEARCH_EPILOG}\n\n{EXIT_CODES}",
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"{APP_NAME} {__version__}",
                        help="print the version and exit")
    parser.add_argument("--db", default=None, help="database file, or postgresql://user@host/dbname for a shared "
                        "library (default: in your user data folder; DESKTOP_MEMORY_DB)")
    parser.add_argument("--smoke", action="store_true", help="self-check: store, sqlite-vec, model, one search")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    search_kw: dict[str, Any] = {"epilog": SEARCH_EPILOG, "formatter_class": argparse.RawDescriptionHelpFormatter}

    p = _command(sub, "index", c.index, "create", "index files and folders (incremental)")
    p.set_defaults(paths_must_exist=True)
    p.add_argument("paths", nargs="+", help="files and folders to add or bring up to date (a folder inside a library "
                   "folder is indexed as part of it)")
    p.add_argument("--force", action="store_true", help="re-read files even if unchanged")
    p.add_argument("--no-embed", action="store_true", help="keyword index only; embed later with `embed`")
    p.add_argument("--json", action="store_true", help="print the summary as JSON (no progress lines)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar or progress lines")

    _add_search_args(_command(sub, "search", c.search, "existing", "search the index", **search_kw))
    p = _command(sub, "context", c.context, "existing", "build a prompt-context block under a token budget",
                 **search_kw)
    _add_search_args(p)
    p.add_argument("--budget", type=_bounded_int(16, 10_000_000), default=None, help="token budget (default 2048)")
    p.add_argument("--include-weak", action="store_true",
                   help="pack weak matches too (left out by default: a query with no strong match packs nothing)")
    p.add_argument("--path-style", choices=PATH_STYLES, default=None,
                   help="how [Source: ...] names files: relative to the indexed folder (default), absolute, name")

    p = _command(sub, "stats", c.stats, "existing", "documents, chunks, vectors")
    p.add_argument("--json", action="store_true", help=JSON_HELP)

    p = _command(sub, "remove", c.remove, "existing",
                 "remove files or folders from the index (files on disk untouched)")
    p.add_argument("paths", nargs="+", help="files or folders to take out of the library (a library folder leaves "
                   "it; one inside a library folder is excluded: watching and re-reading leave it out until `include`)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar or progress lines")
    _add_json(p, c.remove, r.remove_json)

    p = _command(sub, "include", c.include, "existing",
                 "include again what `remove` excluded from a library folder, and read it")
    p.add_argument("paths", nargs="+", help="excluded files or folders (every exclusion at or below each is lifted)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar or progress lines")
    _add_json(p, c.include, r.include_json)

    p = _command(sub, "embed", c.embed, "existing", "embed chunks still waiting for vectors")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    _add_json(p, c.embed, r.embed_json)
    p = _command(sub, "reembed", c.embed, "existing", "drop all vectors and embed again with the configured model")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    _add_json(p, c.embed, r.embed_json)

    p = _command(sub, "list", c.list_documents, "existing", "indexed documents with status")
    p.add_argument("--status", default=None, help="only this status (indexed, skipped, failed, excluded)")
    p.add_argument("--json", action="store_true", help=JSON_HELP)

    p = _command(sub, "check", c.check, "existing", "verify the database's integrity")
    p.add_argument("--full", action="store_true",
                   help="also SQLite's full integrity_check and the full-text index's own self-check "
                        "(slower; holds the database's write lock while it runs)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar or progress lines")
    _add_json(p, c.check, r.check_json)
    p = _command(sub, "compact", c.compact, "existing",
                 "compact and erase: rebuild the database so removed text is gone from the file")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar or progress lines")
    _add_json(p, c.compact, r.compact_json)

    p = _command(sub, "watch", c.watch, "create",
                 "keep folders in sync: index changes as they happen (Ctrl+C stops)")
    p.set_defaults(creates_only_with="folders")  # bare `watch` on a missing library: "no library at", none made
    p.add_argument("folders", nargs="*", help="folders to watch (default: every folder in the library); "
                                                "one not in the library yet is indexed first")
    p.add_argument("--no-embed", action="store_true", help="keyword index only; embed later with `embed`")

    p = _command(sub, "mcp", c.mcp, "settings",
                 "serve the library to chat apps and agents (Model Context Protocol, stdio)",
                 description="Run an MCP server over stdio for Claude Desktop, VS Code, Cursor and other MCP "
                 "clients: tools search, get_context, get_passage and list_sources (read-only). See the "
                 "README for the client configuration.")
    p.add_argument("--db", default=argparse.SUPPRESS,
                   help="database file or postgresql:// URL (default: the app's)")
    p.add_argument("--allow-indexing", action="store_true",
                   help="also offer index_path, limited to folders already in the library")

    add_copy_parser(sub)  # copy --from A --to B (copy_command.py)

    p = _command(sub, "settings", c.settings_command, None,
                 "check the settings file, or reset it (keeping a dated backup)")
    p.add_argument("--reset", action="store_true", help="move the settings file aside; the defaults apply")
    _add_json(p, c.settings_command, r.settings_json)
    add_server_parsers(sub)  # embedder, rerank, api-key (servers.py)
    for name in ("embedder", "rerank", "api-key"):
        _add_json(sub.choices[name], run_server_command, r.server_json)

    p = _command(sub, "paths", paths_command, None,
                 "where everything lives: settings, API keys, data, database, logs, cache, socket")
    p.add_argument("--json", action="store_true", help=JSON_HELP)

    add_bench = find(CLI_COMMANDS, "bench")  # the harness registers itself; the app never imports it
    if add_bench is None:  # a developer tool, not part of the app (or the bundle)
        p = _command(sub, "bench", _bench_missing, None,
                     "retrieval benchmark (needs, in a source checkout: pip install '.[bench]')", add_help=False)
        p.add_argument("rest", nargs=argparse.REMAINDER, help="the benchmark's arguments")
    else:
        add_bench(sub).set_defaults(library="settings")
    return parser


def _bench_missing(args: argparse.Namespace) -> int:
    from ..errors import UserError

    raise UserError(BENCH_INSTALL_HINT)
