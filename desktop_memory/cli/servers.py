"""The CLI's model-server commands: choose the embedder, set up the reranker, store API keys. No Qt import.

    desktop-memory embedder [--kind openai --url URL --model NAME] [--query-prefix P] [--document-prefix P] [--test]
    desktop-memory rerank [--on | --off] [--url URL] [--model NAME] [--depth N] [--timeout S] [--test]
    desktop-memory api-key set|clear|status embedder|rerank|database     (set reads the key from stdin, never argv)

Changes are saved to settings.toml (never the key) exactly as the GUI's Settings dialog saves them. ``--test`` runs
before anything is saved: a failed test changes nothing (exit 1, one sentence). A new embedding model loses nothing:
the library keeps searching with its vectors while ``desktop-memory embed`` builds the new model's beside them
(issue 30); ``--drop MODEL`` deletes another model's vectors kept in the library (``compact`` returns the space).
"""

from __future__ import annotations

import argparse
import dataclasses
import getpass
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..api_keys import KEY_NAMES, clear_key, key_status, set_key
from ..config import EMBEDDERS, EmbedderSettings, Settings, settings_path
from ..errors import UsageError, UserError
from ..settings_file import load_settings, save_settings

COMMANDS = ("embedder", "rerank", "api-key")


def add_server_parsers(sub: Any) -> None:
    """The embedder, rerank and api-key commands, each running ``run_server_command`` (no library needed)."""
    p = sub.add_parser("embedder", help="show, change or test the embedding model (local, Ollama, any "
                       "OpenAI-compatible server)")
    p.add_argument("--kind", choices=EMBEDDERS, default=None, help="local (bundled MiniLM), ollama or openai")
    p.add_argument("--url", default=None, help="server URL (openai: e.g. http://localhost:1234/v1; ollama: "
                   "http://localhost:11434)")
    p.add_argument("--model", default=None, help="model name on the server")
    p.add_argument("--timeout", type=float, default=None, help="seconds to wait for one answer")
    p.add_argument("--query-prefix", default=None, help="text put before each query (pre-filled for known "
                   "models: e5, nomic, bge ...)")
    p.add_argument("--document-prefix", default=None, help="text put before each passage (changing it re-embeds)")
    p.add_argument("--test", action="store_true", help="contact the server: list its models, embed a probe "
                   "(before anything is saved: a failed test changes nothing)")
    p.add_argument("--drop", metavar="MODEL", default=None, help="delete another model's vectors kept in the "
                   "library (see `stats`; `compact` then gives the space back)")

    p = sub.add_parser("rerank", help="show, change or test the optional reranker (a /v1/rerank server)")
    onoff = p.add_mutually_exclusive_group()
    onoff.add_argument("--on", dest="enable", action="store_const", const=True, default=None,
                       help="rerank every search's top results (needs --url, or one saved before)")
    onoff.add_argument("--off", dest="enable", action="store_const", const=False,
                       help="stop reranking: the fused order is shown again")
    p.add_argument("--url", default=None, help="rerank endpoint or server, e.g. http://localhost:8012/v1/rerank")
    p.add_argument("--model", default=None, help="reranking model name (some servers ignore it)")
    p.add_argument("--depth", type=int, default=None, help="rerank the top N fused passages (default 30)")
    p.add_argument("--timeout", type=float, default=None, help="seconds before falling back to the fused order "
                   "(default 2)")
    p.add_argument("--test", action="store_true", help="rank a test pair on the server")

    p = sub.add_parser("api-key", help="store an API key for a model server outside settings.toml (keyring or an "
                       "owner-only file)")
    # no argparse choices here: its "invalid choice: 'sk-…'" would print a key typed in the wrong place
    p.add_argument("action", metavar="{set,clear,status}", help="set (reads the key from stdin), clear, or status")
    p.add_argument("name", metavar="{embedder,rerank,database}", nargs="?", default=None,
                   help="embedder, rerank, or database (a shared PostgreSQL library's password)")
    p.add_argument("extra", nargs=argparse.REMAINDER, metavar="-",  # a key typed as an argument lands here
                   help="nothing else: a key typed here is refused without being shown (set reads it from stdin)")
    for name in COMMANDS:
        sub.choices[name].set_defaults(func=run_server_command, library=None)


def run_server_command(args: argparse.Namespace) -> int:
    if args.command == "api-key":
        return _api_key(*_api_key_args(args))
    _check_urls(args)  # before anything is read or saved: a malformed address is refused in one sentence
    settings = load_settings()  # a broken file stops here (SettingsError), and is never overwritten
    if args.command == "embedder":
        return _embedder(args, settings)
    return _rerank(args, settings)


def _api_key_args(args: argparse.Namespace) -> tuple[str, str]:
    """(action, name), checked without ever repeating what was typed: a word in the wrong place may be the key."""
    usage = "usage: desktop-memory api-key {set,clear,status} {embedder,rerank,database} (set reads the key from stdin)"
    if args.extra or args.action not in ("set", "clear", "status") or args.name not in KEY_NAMES:
        looks_like_key = bool(args.extra) or any(v is not None and v not in ("set", "clear", "status", *KEY_NAMES)
                                                 for v in (args.action, args.name))
        hint = (" An argument that is not one of these was left out of this message (it may be a key) and was not "
                "stored: `api-key set` reads the key from stdin, never from the command line.") if looks_like_key \
            else ""
        raise UsageError(f"{usage}.{hint}")
    return args.action, args.name


def _check_urls(args: argparse.Namespace) -> None:
    """``--url`` refused at once, in one sentence naming it, when it cannot be a server's address."""
    from ..config import url_problem
    url = getattr(args, "url", None)
    why = url_problem(url) if url is not None else None
    if why is not None:
        raise UsageError(f"--url {url!r} is not an http:// or https:// address ({why}); nothing was changed.")


def _check_url_in_use(field: str | None, url: str) -> None:
    """A server chosen without --url uses the address saved for it, which may be one an older version let in."""
    from ..config import url_problem
    why = url_problem(url) if field else None
    if why is not None:
        raise UsageError(f"The saved {field} {url!r} is not an http:// or https:// address ({why}): give the "
                         "server's address with --url; nothing was changed.")


def _read_key(name: str) -> str:
    """The key from the prompt (hidden) or from stdin, whole: a piped key of several lines is refused (by
    api_keys.key_problem), never cut to its first line."""
    if sys.stdin.isatty():
        return getpass.getpass(f"{name} API key (input hidden): ")
    return sys.stdin.read(64 * 1024)


def _api_key(action: str, name: Any) -> int:
    if action == "status":
        print(f"{name} API key: {key_status(name)}")
        return 0
    if action == "clear":
        clear_key(name)
        print(f"{name} API key cleared")
        return 0
    value = _read_key(name)
    if not value.strip():
        raise UserError("No key given: type it at the prompt, or pipe it in (e.g. `printenv KEY | desktop-memory "
                        f"api-key set {name}`).")
    print(f"{name} API key stored in {set_key(name, value)}")
    return 0


def _describe_embedder(e: EmbedderSettings) -> str:
    if e.kind == "openai":
        where = f"openai {e.openai_url} model {e.openai_model or '(not set)'}"
    elif e.kind == "ollama":
        where = f"ollama {e.ollama_url} model {e.ollama_model}"
    else:
        where = e.kind + (f" {e.local_model_dir}" if e.local_model_dir else " (bundled all-MiniLM-L6-v2)")
    prefixes = f"; query prefix {e.query_prefix!r}, document prefix {e.document_prefix!r}" \
        if e.query_prefix or e.document_prefix else ""
    return where + prefixes


def _embedder(args: argparse.Namespace, settings: Settings) -> int:
    from ..model_servers import ModelServers, known_prefixes

    old = settings.embedder
    new = old
    if args.kind is not None:
        new = dataclasses.replace(new, kind=args.kind)
    model_field = {"openai": "openai_model", "ollama": "ollama_model"}.get(new.kind)
    url_field = {"openai": "openai_url", "ollama": "ollama_url"}.get(new.kind)
    timeout_field = {"openai": "openai_timeout_s", "ollama": "ollama_timeout_s"}.get(new.kind)
    for value, name in ((args.model, model_field), (args.url, url_field), (args.timeout, timeout_field)):
        if value is not None:
            if name is None:
                raise UserError("--url, --model and --timeout are for a server (--kind openai or ollama).")
            new = dataclasses.replace(new, **{name: value})
    _check_url_in_use(url_field, str(getattr(new, url_field)) if url_field else "")
    model = str(getattr(new, model_field)) if model_field else ""
    known = known_prefixes(model) if model_field and (args.model is not None or args.kind is not None) else None
    if known is not None and args.query_prefix is None and args.document_prefix is None:
        new = dataclasses.replace(new, query_prefix=known[0], document_prefix=known[1])
        print(f"prefixes for {model}: query {known[0]!r}, document {known[1]!r} (override with --query-prefix / "
              "--document-prefix)")
    if args.query_prefix is not None:
        new = dataclasses.replace(new, query_prefix=args.query_prefix)
    if args.document_prefix is not None:
        new = dataclasses.replace(new, document_prefix=args.document_prefix)
    tested = _test_embedder(lambda: ModelServers().try_embedder(new)) if args.test else None  # before any save
    if new != old:
        _switch_embedder(settings, new, args.db)
    else:
        print(f"embedder: {_describe_embedder(new)}")
    if tested is not None:
        print(tested)
    if args.drop:
        _drop_model(args.drop, settings, args.db)
    return 0


def _test_embedder(try_it: Callable[[], str]) -> str:
    """Contact the server (or load the local model) and embed a probe; a failure, whatever it is (a server that
    is down, a malformed URL, a model that is missing), is one sentence and exit 1, with nothing saved and
    nothing in any library touched."""
    try:
        return "ok: " + try_it()
    except Exception as exc:  # one sentence for any failure: the point of --test is to catch them
        reason = " ".join(str(exc).split()).rstrip(".") or type(exc).__name__
        raise UserError(f"The test failed, so nothing was saved or changed: {reason}.") from exc


def _drop_model(model_id: str, settings: Settings, db: str | None) -> None:
    from ..service import MemoryService

    svc = MemoryService(settings, db_path=Path(db) if db else None)
    try:
        gone = svc.drop_model_vectors(model_id)
    finally:
        svc.close()
    print(f"dropped {gone:,} vectors of {model_id} from this library; `desktop-memory compact` gives their space "
          "back to the disk")


def _switch_embedder(settings: Settings, new: EmbedderSettings, db: str | None) -> None:
    from ..service import MemoryService

    updated = dataclasses.replace(settings, embedder=new)
    save_settings(updated)  # validated first: a bad value raises SettingsError and nothing is written
    print(f"embedder: {_describe_embedder(new)} (saved to {settings_path()})")
    svc = MemoryService(updated, db_path=Path(db) if db else None)
    try:
        before = svc.stats().model_id
        build = svc.set_embedder_settings(new)
        after = svc.stats()
    finally:
        svc.close()
    if build:
        print(f"this library keeps searching with its {before} vectors; run `desktop-memory embed` to build "
              f"{after.configured_model}'s beside them (search switches when they are complete; Ctrl-C keeps the "
              "old ones)")
    elif before is not None and after.model_id != before:
        print(f"this library switched at once to the {after.model_id} vectors it kept (its {before} vectors are "
              "kept too)")


def _rerank(args: argparse.Namespace, settings: Settings) -> int:
    s = settings.search
    changes = {k: v for k, v in (("rerank", args.enable), ("rerank_url", args.url), ("rerank_model", args.model),
                                 ("rerank_depth", args.depth), ("rerank_timeout_s", args.timeout)) if v is not None}
    if changes:
        s = dataclasses.replace(s, **changes)
        save_settings(dataclasses.replace(settings, search=s))
    state = "on" if s.rerank else "off"
    print(f"rerank: {state}, {s.rerank_url}, model {s.rerank_model or '(server default)'}, top {s.rerank_depth}, "
          f"timeout {s.rerank_timeout_s:g} s" + (f" (saved to {settings_path()})" if changes else ""))
    if args.test:
        from ..model_servers import ModelServers

        print(ModelServers().test_reranker(s).status)
    return 0
