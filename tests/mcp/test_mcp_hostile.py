"""Issues 21 §1/§3/§4 and 22 §3: the MCP server against hostile arguments and lines, through the SDK's own client
(``mcp.client.stdio`` + ``ClientSession``) and, for lines no SDK client can send (not JSON, lone surrogates), the
raw stdio pipe a misbehaving client would write to. The library is made here, in a tmp folder: notes inside it,
a secret outside it, and symlinks from the one to the other.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from desktop_memory.config import EmbedderSettings, Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.service import MemoryService
from desktop_memory.settings_file import save_settings

REPO = Path(__file__).resolve().parents[2]
ANSWER_WITHIN_S = 15.0  # generous for a loaded machine (answers take 2-12 ms: desktop_memory_bench/mcp_hostile.py);
# an unanswered line never arrives at all
START_WITHIN_S = 120.0  # the server's start-up (imports, opening the library) at load ~60
NOT_IN_LIBRARY = "is not a folder in the library"


@pytest.fixture
def lib(tmp_path: Path) -> dict[str, Path]:
    notes = tmp_path / "notes"
    outside = tmp_path / "outside"
    (notes / "projects").mkdir(parents=True)
    outside.mkdir()
    (notes / "plan.md").write_text("# Plan\n\nThe harbour bridge opens in spring; the ferry keeps running.\n")
    (notes / "projects" / "garden.md").write_text("# Garden\n\nTomatoes need sun and water every morning.\n")
    (outside / "secret.md").write_text("# Secret\n\nThe outsidesecretword must never reach the chat.\n")
    os.symlink("../outside", notes / "escape")
    os.symlink("../outside/secret.md", notes / "escfile.md")
    os.symlink("../../outside", notes / "projects" / "deeper")
    db = tmp_path / "data" / "memory.db"
    settings = Settings(db_path=str(db), embedder=EmbedderSettings(kind="hash"))
    svc = MemoryService(settings, embedder=HashEmbedder(64))
    try:
        svc.index_paths([notes])
    finally:
        svc.close()
    save_settings(settings)
    return {"notes": notes, "outside": outside, "db": db}


def _env() -> dict[str, str]:
    env = {k: os.environ[k] for k in ("DESKTOP_MEMORY_CONFIG_DIR", "DESKTOP_MEMORY_DATA_DIR")}
    env["PYTHONPATH"] = str(REPO)
    return env


def _client(args: list[str], body: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        params = StdioServerParameters(command=sys.executable, args=["-m", "desktop_memory.cli", "mcp", *args],
                                       env=_env(), cwd=str(REPO))
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                return await body(session)

    return anyio.run(main)


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def test_symlinks_out_of_a_library_folder_are_refused_in_every_form(lib):
    notes = lib["notes"]
    forms = ["notes/escape", "notes/escfile.md", "notes/projects/deeper", str(notes / "escape"),
             str(notes / "escfile.md"), str(notes / "escape" / "secret.md"), "notes/escape/secret.md"]

    async def body(s: ClientSession):
        out = {f: await s.call_tool("index_path", {"path": f}) for f in forms}
        out["search"] = await s.call_tool("search", {"query": "outsidesecretword", "backend": "keyword"})
        out["ok"] = await s.call_tool("index_path", {"path": "notes/projects"})
        return out

    out = _client(["--allow-indexing"], body)
    for f in forms:
        assert out[f].is_error, f"{f} reached the indexer: {_text(out[f])}"
        assert _text(out[f]) == (f"{f!r} {NOT_IN_LIBRARY}: name a library folder, or a file or folder inside one "
                                 "(a link leading out of it is not followed)."), "one message for every form"
    assert out["search"].structured_content["results"] == [], "nothing outside the library was read"
    assert not out["ok"].is_error, _text(out["ok"])


def test_every_path_like_argument_goes_through_the_same_check(lib):
    calls = {
        "path /etc": ("search", {"query": "bridge", "path": "/etc"}),
        "path escape": ("search", {"query": "bridge", "path": "notes/escape"}),
        "glob dotdot": ("search", {"query": "bridge", "glob": "../../etc/passwd"}),
        "glob absolute outside": ("get_context", {"query": "bridge", "glob": "/etc/*"}),
        "folder": ("list_sources", {"folder": "/etc"}),
        "folder home": ("list_sources", {"folder": "~"}),
        "index /etc": ("index_path", {"path": "/etc"}),
        "index dotdot": ("index_path", {"path": "notes/../outside"}),
    }

    async def body(s: ClientSession):
        return {k: await s.call_tool(name, args) for k, (name, args) in calls.items()}

    out = _client(["--allow-indexing"], body)
    for key, (_, args) in calls.items():
        shown = next(v for k, v in args.items() if k in ("path", "glob", "folder"))
        assert out[key].is_error, key
        assert _text(out[key]).startswith(f"{shown!r} {NOT_IN_LIBRARY}"), (key, _text(out[key]))


def test_missing_path_in_the_library_is_an_error(lib):
    async def body(s: ClientSession):
        return await s.call_tool("index_path", {"path": "notes/no-such-folder"})

    r = _client(["--allow-indexing"], body)
    assert r.is_error and "no such file or folder" in _text(r)


def test_a_path_that_does_not_exist_is_an_error_for_every_tool(lib):
    """Issue 33 newcomer §4 (docs/MCP.md's claim made true): a `path` or `folder` inside the library that is neither
    on disk nor indexed answers "no such file or folder", not an empty result the model would read as "nothing
    about it". A file deleted from disk but still indexed is still a filter (its passages are found)."""
    (lib["notes"] / "projects" / "garden.md").unlink()  # indexed, gone from disk (no watcher runs here)

    async def body(s: ClientSession):
        return {
            "search": await s.call_tool("search", {"query": "harbour", "path": "notes/old"}),
            "get_context": await s.call_tool("get_context", {"query": "harbour", "path": "notes/old.md"}),
            "list_sources": await s.call_tool("list_sources", {"folder": "notes/old"}),
            "deleted but indexed": await s.call_tool("search", {"query": "tomatoes",
                                                                "path": "notes/projects/garden.md"}),
        }

    out = _client([], body)
    for tool in ("search", "get_context", "list_sources"):
        assert out[tool].is_error, tool
        assert "no such file or folder" in _text(out[tool]) and "list_sources shows what" in _text(out[tool])
    assert not out["deleted but indexed"].is_error and "garden.md" in _text(out["deleted but indexed"])


def test_argument_errors_are_one_sentence_for_a_person(lib):
    calls: dict[str, tuple[tuple[str, dict[str, Any]], str | None]] = {
        "top_k": (("search", {"query": "x", "top_k": 500}), "'top_k' must be a whole number from 1 to 50 (got 500)."),
        "query": (("search", {}), "The argument 'query' is required: text of 1 to 2000 characters."),
        "backend": (("search", {"query": "x", "backend": "magic"}),
                    "'backend' must be one of hybrid, keyword, bm25, dense (got 'magic')."),
        "budget": (("get_context", {"query": "x", "budget_tokens": 5}),
                   "'budget_tokens' must be a whole number from 64 to 32000 (got 5)."),
        "huge id": (("get_passage", {"id": 2**70}),
                    f"'id' must be a whole number from 1 to {2**63 - 1} (got {2**70})."),
        "negative id": (("get_passage", {"id": -(2**70)}),
                        f"'id' must be a whole number from 1 to {2**63 - 1} (got {-(2**70)})."),
        "float": (("get_passage", {"id": 1.5}), f"'id' must be a whole number from 1 to {2**63 - 1} (got 1.5)."),
        "huge age": (("search", {"query": "x", "modified_since": "9" * 400 + "d"}), None),
        "superscript age": (("get_context", {"query": "x", "modified_until": "\u00b2d"}), None),
        "kinds": (("search", {"query": "x", "kinds": ["zip"]}),
                  "'kinds' must be a list of: markdown, text, code, pdf, document, slides, ebook, html (got 'zip')."),
    }

    async def body(s: ClientSession):
        return {k: await s.call_tool(*call) for k, (call, _) in calls.items()}

    out = _client([], body)
    for key, (_, expected) in calls.items():
        assert out[key].is_error, key
        if expected is None:  # a date that is not one: the date message, not "an unexpected problem"
            assert _text(out[key]).startswith("Not a date:") and "7d" in _text(out[key]), _text(out[key])
        else:
            assert _text(out[key]) == expected
    for r in out.values():
        assert "pydantic" not in _text(r) and "http" not in _text(r) and "type=" not in _text(r)


def test_db_naming_a_folder_is_called_a_folder(tmp_path, lib):
    async def body(s: ClientSession):
        return await s.call_tool("list_sources", {})

    r = _client(["--db", str(tmp_path)], body)
    assert r.is_error and f"{tmp_path} is a folder, not a desktop-memory library file" in _text(r)
    assert "nothing has been indexed yet" not in _text(r)


# ---------------------------------------------------------------- the raw wire: lines no SDK client sends

class Wire:
    """The server as a subprocess with its stdio pipes; one JSON line out, the reply line (or None) back."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "desktop_memory.cli", "mcp", *args], cwd=REPO,
                                     env=_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.send('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
                  '"capabilities":{},"clientInfo":{"name":"wire","version":"1"}}}')
        assert self.reply(START_WITHIN_S) is not None
        self.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")
        self.proc.stdin.flush()

    def reply(self, within_s: float = ANSWER_WITHIN_S) -> dict[str, Any] | None:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], within_s)
        return json.loads(self.proc.stdout.readline()) if ready else None

    def close(self) -> str:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return self.proc.stderr.read().decode("utf-8", "replace")


def _call(ident: int, tool: str, arguments: str) -> str:
    params = '{"name":"' + tool + '","arguments":' + arguments + "}"
    return '{"jsonrpc":"2.0","id":' + str(ident) + ',"method":"tools/call","params":' + params + "}"


def test_every_line_gets_an_answer(lib):
    wire = Wire("--allow-indexing")
    try:
        lines = {
            "surrogate query": _call(1, "search", r'{"query":"\ud800"}'),
            "surrogate path": _call(2, "index_path", r'{"path":"notes/\udfff"}'),
            "surrogate key": _call(3, "search", r'{"query":"x","\ud800":1}'),
            "not json": "this is not json {",
            "truncated": '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"sea',
            "nan": _call(5, "search", '{"query":"x","top_k":NaN}'),
            "surrogate list": '{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"cursor":"\\ud800"}}',
            "fine after all that": _call(7, "search", '{"query":"harbour bridge","backend":"keyword"}'),
        }
        answers: dict[str, Any] = {}
        for key, line in lines.items():
            wire.send(line)
            answers[key] = wire.reply()
    finally:
        stderr = wire.close()
    assert all(a is not None for a in answers.values()), [k for k, a in answers.items() if a is None]
    for key, ident, field in (("surrogate query", 1, "query"), ("surrogate path", 2, "path"),
                              ("surrogate key", 3, "\\ud800")):
        a = answers[key]
        assert a["id"] == ident and a["result"]["isError"] is True
        assert a["result"]["content"][0]["text"].startswith(f"The argument '{field}' holds text that is not valid "
                                                            "Unicode")
    for key in ("not json", "truncated"):
        assert answers[key]["id"] is None and answers[key]["error"]["code"] == -32700
    nan = answers["nan"]
    assert nan["id"] == 5 and nan["result"]["isError"]
    assert "'top_k' must be a whole number" in nan["result"]["content"][0]["text"]
    assert answers["surrogate list"]["id"] == 6 and answers["surrogate list"]["error"]["code"] == -32602
    fine = answers["fine after all that"]
    assert fine["id"] == 7 and not fine["result"]["isError"], "the server keeps serving"
    assert "Traceback" not in stderr


def test_arguments_are_checked_strictly(lib):
    """Issue 33 newcomer §5: an argument the tool does not have is named (not dropped), `true` and the text "2" are
    not numbers, 1 is not a boolean, and a missing value is quoted back as JSON's null, not Python's None."""
    calls: dict[str, tuple[tuple[str, dict[str, Any]], str]] = {
        "unknown": (("search", {"query": "harbour", "top-k": 3}),
                    "'top-k' is not an argument of this tool; it takes 'query', 'top_k', 'backend', 'path', 'glob', "
                    "'kinds', 'modified_since', 'modified_until'."),
        "true": (("search", {"query": "harbour", "top_k": True}),
                 "'top_k' must be a whole number from 1 to 50 (got true)."),
        "text 2": (("search", {"query": "harbour", "top_k": "2"}),
                   "'top_k' must be a whole number from 1 to 50 (got '2')."),
        "null query": (("search", {"query": None}), "'query' must be text of 1 to 2000 characters (got null)."),
        "null id": (("get_passage", {"id": None}),
                    f"'id' must be a whole number from 1 to {2**63 - 1} (got null)."),
        "1 for a boolean": (("get_context", {"query": "harbour", "include_weak": 1}),
                            "'include_weak' must be true or false (got 1)."),
        "false limit": (("list_sources", {"limit": False}),
                        "'limit' must be a whole number from 1 to 1000 (got false)."),
        "kinds not a list": (("search", {"query": "x", "kinds": "pdf"}),
                             "'kinds' must be a list of: markdown, text, code, pdf, document, slides, ebook, html "
                             "(got 'pdf')."),
    }

    async def body(s: ClientSession):
        out = {k: await s.call_tool(*call) for k, (call, _) in calls.items()}
        out["fine"] = await s.call_tool("search", {"query": "harbour", "top_k": 2.0, "backend": None})
        return out

    out = _client([], body)
    for key, (_, expected) in calls.items():
        assert out[key].is_error, key
        assert _text(out[key]) == expected, key
    assert not out["fine"].is_error and "harbour" in _text(out["fine"]), "JSON's 2.0 is a whole number; null = default"


def test_a_request_with_an_object_id_gets_an_answer(lib):
    """Issue 33 newcomer §5: the SDK reads a request whose id is not a string or a whole number as a notification
    and answers nothing; the client then waits for ever. Each gets an invalid-request error (id null)."""
    wire = Wire()
    try:
        answers = {}
        for ident in ('{"a":1}', "[1]", "1.5", "true", "null"):
            wire.send('{"jsonrpc":"2.0","id":' + ident + ',"method":"tools/list"}')
            answers[ident] = wire.reply()
        wire.send('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"id"}}')
        wire.send('{"jsonrpc":"2.0","id":9,"method":"tools/list"}')  # the real notification above got no answer
        after = wire.reply()
    finally:
        stderr = wire.close()
    for ident, a in answers.items():
        assert a is not None, f"no answer for id {ident}"
        assert a["id"] is None and a["error"]["code"] == -32600
        assert a["error"]["message"].startswith('Invalid request: "id" must be a string or a whole number'), a
    assert after is not None and after["id"] == 9 and "tools" in after["result"]
    assert "Traceback" not in stderr
