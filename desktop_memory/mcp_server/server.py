"""The MCP server: the library's tools over stdio, built on the official SDK (``mcp.server.mcpserver``).

Tool arguments are declared with types and pydantic ``Field`` constraints, so the SDK publishes a JSON schema for
each and rejects bad arguments with a message naming the field; results carry plain text for the model and
structured content checked against the output schema (schemas.py). A problem the person can fix (no library
yet, database busy, unknown path, bad date) comes back as a tool error with that message, never a crash.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.stdio import stdio_server
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from .. import APP_NAME, __version__
from ..config import Settings
from ..errors import UserError
from ..service import MemoryService
from . import tools
from .arguments import plain_message, strict_problem
from .library import Library
from .schemas import ContextOut, IndexOut, PassageOut, SearchOut, SourcesOut
from .wire import claim_stdin

T = TypeVar("T")

INSTRUCTIONS = (
    "desktop-memory is the person's private, local index of their own files (notes, documents, PDFs, code). "
    "Use `search` to find passages about a topic, `get_context` to get a ready-to-cite block of the best passages "
    "under a token budget, `get_passage` to read a passage with what surrounds it, and `list_sources` to see which "
    "folders and files are in the library. Cite sources by the [Source: …] lines. Paths are shown relative to the "
    "indexed folder they belong to; pass them back as they are."
)

Backend = Literal["hybrid", "keyword", "bm25", "dense"]
Kind = Literal["markdown", "text", "code", "pdf", "document", "slides", "ebook", "html"]  # models.DOC_KINDS

Query = Annotated[str, Field(min_length=1, max_length=2000,
                             description="What to look for, in plain words (a question or keywords; quotes and "
                                         "operators are read as text).")]
TopK = Annotated[int, Field(ge=1, le=50, description="How many passages to return, best first (1-50).")]
BackendArg = Annotated[Backend | None, Field(
    description="Retrieval method: hybrid (keyword + semantic, the default and usually best), keyword (exact "
                "words, SQLite FTS5 BM25), bm25 (classic BM25), dense (semantic only). Default: the app's setting.")]
PathArg = Annotated[str | None, Field(
    description="Only files under this folder or file, written as results show paths (starting with the indexed "
                "folder's name, e.g. 'notes/projects') or as an absolute path.")]
GlobArg = Annotated[str | None, Field(
    description="Only files whose path matches this glob, e.g. '*.md' or 'notes/*/plan*.pdf'.")]
KindsArg = Annotated[list[Kind] | None, Field(description="Only these kinds of file.")]
SinceArg = Annotated[str | None, Field(
    description="Only files modified on or after this date: ISO (2024-05-01, 2024-05-01T10:00) or an age (7d, "
                "12h, 2w).")]
UntilArg = Annotated[str | None, Field(description="Only files modified before this date (same forms).")]

MAX_ID = 2**63 - 1  # SQLite's largest integer: a larger id is answered as out of range, not an OverflowError

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

log = logging.getLogger(__name__)


def _result(text: str, out: BaseModel) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=out.model_dump(mode="json"))


async def _run(lib: Library, fn: Callable[[MemoryService], T]) -> T:
    try:
        return await lib.run(fn)
    except UserError as exc:  # no library, busy, bad path or date: the message says what to do
        raise ToolError(str(exc)) from exc


class MemoryServer(MCPServer[Any]):
    """The SDK's server, answering for people: a bad argument gets one short sentence naming it and what it
    accepts (not pydantic's report), an argument the tool does not have or a value of the wrong JSON type is refused
    rather than dropped or converted (arguments.strict_problem), and every line on stdin gets an answer (wire.py)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        schema = await self._input_schema(name)
        if schema is not None and isinstance(arguments, dict):  # unknown tools: the SDK's own answer
            problem = strict_problem(arguments, schema)
            if problem:
                raise ToolError(problem)
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:  # a bug: the SDK logs the traceback on stderr, the chat gets a sentence
            raise UnexpectedToolError(f"{name} failed on an unexpected problem (the server logged it); try other "
                                      "arguments, or report it if it keeps happening.") from exc.__cause__
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(plain_message(cause, schema or {})) from cause
            if isinstance(cause, ToolError):  # ours (a UserError's message): without "Error executing tool …: "
                raise ToolError(str(cause)) from cause
            raise

    async def _input_schema(self, name: str) -> dict[str, Any] | None:
        """The tool's published input schema (what the client sees), or None for a name that is not a tool."""
        return next((t.input_schema for t in await self.list_tools() if t.name == name), None)

    async def run_stdio_async(self) -> None:
        """The SDK's stdio transport, with our checked stdin in front (wire.py)."""
        stdin = claim_stdin()
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):
            stdin.connect(write_stream)
            low = self._lowlevel_server
            await low.run(read_stream, write_stream, low.create_initialization_options())


def build_server(lib: Library, *, allow_indexing: bool = False) -> MCPServer[Any]:
    """The server with its tools (``index_path`` only with ``allow_indexing``)."""
    server: MCPServer[Any] = MemoryServer(name=APP_NAME, title="desktop-memory: your files", version=__version__,
                                          instructions=INSTRUCTIONS, log_level="WARNING")

    async def search(*, query: Query, top_k: TopK = 10, backend: BackendArg = None, path: PathArg = None,
                     glob: GlobArg = None, kinds: KindsArg = None, modified_since: SinceArg = None,
                     modified_until: UntilArg = None) -> Annotated[CallToolResult, SearchOut]:
        f = tools.Filters(path, glob, kinds or (), modified_since, modified_until)
        return _result(*await _run(lib, lambda svc: tools.search(lib, svc, query, top_k=top_k, backend=backend,
                                                                  filters=f)))

    server.add_tool(search, name="search", title="Search the person's files", annotations=READ_ONLY, description=(
        "Search the person's indexed files (notes, documents, PDFs, code) and return the best-matching passages, "
        "best first. Each passage comes with its id (for get_passage), its source file and location (heading, "
        "page, lines), its match strength ('strong' or 'weak'), which retrieval lanes found it and how high "
        "(e.g. 'keyword #3 · semantic #1, cos 0.71'), and its text. Filters narrow by folder, glob, file kind and "
        "modification date. Use it to find facts the person wrote down; quote passages by their [Source: …] line."))

    async def get_context(
        *,
        query: Query,
        budget_tokens: Annotated[int | None, Field(ge=64, le=32000, description=(
            "Token budget of the block (estimated tokens, 64-32000). Default: the app's setting (2048)."))] = None,
        top_k: TopK = 10, backend: BackendArg = None, path: PathArg = None, glob: GlobArg = None,
        kinds: KindsArg = None, modified_since: SinceArg = None, modified_until: UntilArg = None,
        include_weak: Annotated[bool, Field(description=(
            "Also pack passages that are only weak matches (left out by default)."))] = False,
    ) -> Annotated[CallToolResult, ContextOut]:
        f = tools.Filters(path, glob, kinds or (), modified_since, modified_until)
        return _result(*await _run(lib, lambda svc: tools.get_context(
            lib, svc, query, budget=budget_tokens, top_k=top_k, backend=backend, filters=f,
            include_weak=include_weak)))

    server.add_tool(get_context, name="get_context", title="Context block for a question", annotations=READ_ONLY,
                    description=(
        "Build the prompt-context block for a question: the best passages in rank order, each introduced by a "
        "'[Source: file § heading · p. N · lines a–b]' line, packed greedily under a token budget, exactly as the "
        "desktop app copies it. The result also lists what was left out and why (over budget, or a weak match). "
        "Use it when you want grounded material to answer from and cite."))

    async def get_passage(
        id: Annotated[int, Field(ge=1, le=MAX_ID, description="A passage id from search or get_context.")],
        neighbours: Annotated[int, Field(ge=0, le=5, description=(
            "How many passages before and after it in the same file to include (0-5)."))] = 1,
    ) -> Annotated[CallToolResult, PassageOut]:
        return _result(*await _run(lib, lambda svc: tools.get_passage(lib, svc, id, neighbours)))

    server.add_tool(get_passage, name="get_passage", title="Read a passage", annotations=READ_ONLY, description=(
        "Read one passage in full by its id (from search or get_context), with its source and location and the "
        "passages just before and after it in the same file, to see what surrounds a search hit."))

    async def list_sources(
        folder: Annotated[str | None, Field(description=(
            "List the files under this folder (as shown in the folder list, or absolute). Omit it to get the "
            "indexed folders with their counts and the files added on their own."))] = None,
        status: Annotated[Literal["indexed", "skipped", "failed", "pending"] | None, Field(description=(
            "Only files with this status (skipped/failed files carry the reason)."))] = None,
        limit: Annotated[int, Field(ge=1, le=1000, description="At most this many files (1-1000).")] = 100,
    ) -> Annotated[CallToolResult, SourcesOut]:
        return _result(*await _run(lib, lambda svc: tools.list_sources(lib, svc, folder, status, limit)))

    server.add_tool(list_sources, name="list_sources", title="What is in the library", annotations=READ_ONLY,
                    description=(
        "List what the library holds: the indexed folders with file counts by status (indexed, skipped, failed, "
        "pending) and passage counts, whole-library totals (files, passages, semantic vectors, the model), and "
        "files with their status and the reason a file was skipped or failed, either under one folder or, "
        "without a folder, the files added on their own."))

    if allow_indexing:
        async def index_path(
            path: Annotated[str, Field(min_length=1, description=(
                "A folder already in the library, a subfolder or a file inside one (as list_sources shows it, or "
                "absolute)."))],
        ) -> Annotated[CallToolResult, IndexOut]:
            return _result(*await _run(lib, lambda svc: tools.index_path(lib, svc, path)))

        server.add_tool(index_path, name="index_path", title="Re-index a library folder", description=(
            "Bring the index up to date for a folder already in the library (or a subfolder or file inside one): "
            "new and changed files are read and embedded, deleted ones removed, unchanged ones skipped. It cannot "
            "add folders the person has not added. A large change can take minutes."),
            annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                        open_world_hint=False))
    return server


def serve(settings: Settings, db_path: str | None = None, *, allow_indexing: bool = False) -> int:
    """Run the stdio server until the client closes it. Only protocol messages go to stdout."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="desktop-memory mcp: %(message)s")
    lib = Library(settings, db_path)
    if isinstance(lib.db_path, Path) and not lib.db_path.is_file():
        log.warning("%s", f"{lib.db_path} is a folder, not a library file; every tool will say so"
                    if lib.db_path.is_dir() else
                    f"no library yet at {lib.db_path}; tools will say so until one is indexed")
    lib.warm_up()
    try:
        build_server(lib, allow_indexing=allow_indexing).run("stdio")
    except KeyboardInterrupt:
        pass
    finally:
        lib.close()
    return 0
