"""The stdio wire in front of the SDK: every line a client sends gets an answer, even one the SDK cannot parse.

Why: the SDK's stdio reader parses each line with pydantic's JSON parser and, when that fails, passes the error to
the session, which drops it: the client waits for its own timeout. Two kinds of line end that way: text that is
not JSON at all, and JSON holding a lone surrogate escape (``"\\ud800"``, valid JSON text but not Unicode; Python's
``json`` reads it, pydantic's parser refuses it). Here each line is tried with the SDK's own parser first; one it
refuses is answered on the spot through the SDK's write stream (so replies never interleave): a JSON-RPC parse
error (-32700, id null) for what is not JSON, a tool error result for a ``tools/call`` whose arguments hold a lone
surrogate, an invalid-request error (-32600) for any other request it cannot take, and for a request whose ``id``
is not a string or a whole number (an object, a list, ``1.5``, ``true``, ``null``: the SDK reads such a line as a
notification and would answer nothing). Notifications get no answer (JSON-RPC forbids one) and are logged.

Like the SDK's transport, fd 0 is pointed at the null device while serving, so a child process cannot read the
client's messages; fd 1 stays the SDK's (it diverts it to stderr while serving).
"""

from __future__ import annotations

import io
import json
import logging
import os
from typing import Any, TextIO

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectSendStream
from mcp.shared.message import SessionMessage

log = logging.getLogger(__name__)

MAX_SHOWN = 60  # characters of a bad value quoted back


def has_lone_surrogate(text: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in text)


def surrogate_field(value: Any, where: str = "") -> str | None:
    """The name (dotted) of the first argument holding a lone surrogate, or None."""
    if isinstance(value, str):
        return where or "?" if has_lone_surrogate(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            name = f"{where}.{key}" if where else str(key)
            if has_lone_surrogate(str(key)):
                return name
            found = surrogate_field(item, name)
            if found:
                return found
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = surrogate_field(item, f"{where}[{i}]")
            if found:
                return found
    return None


def not_unicode_message(field: str) -> str:
    shown = field.encode("utf-8", "backslashreplace").decode("utf-8")  # a surrogate in a name is shown escaped
    return (f"The argument '{shown}' holds text that is not valid Unicode (a lone surrogate, e.g. \\ud800); "
            "send it as plain text.")


def answer_for(line: str) -> types.JSONRPCMessage | None:
    """None when the SDK can take ``line``; else the answer to send instead ("" lines never get here)."""
    try:
        parsed = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except Exception:  # pydantic's ValidationError: diagnosed below with the standard library's parser
        parsed = None
    if parsed is not None:
        if isinstance(parsed, types.JSONRPCNotification) and '"id"' in line:
            return _id_problem(line)
        return None
    try:
        msg = json.loads(line, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        log.warning("refused a line that is not JSON (%d characters)", len(line))
        return _error(None, types.PARSE_ERROR, "Parse error: the message is not valid JSON.")
    ident = msg.get("id") if isinstance(msg, dict) else None
    if not isinstance(ident, (int, str)) or isinstance(ident, bool) or not _fits(ident):
        log.warning("refused an unreadable message without a usable id")
        return _error(None, types.INVALID_REQUEST, "Invalid request: not a JSON-RPC message this server can read.")
    field = surrogate_field(msg.get("params"))
    if field and msg.get("method") == "tools/call":
        name = field.removeprefix("arguments.")
        text = not_unicode_message(name)
        log.info("tool call refused: %s", text)
        result = types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
        return types.JSONRPCResponse(jsonrpc="2.0", id=ident,
                                     result=result.model_dump(by_alias=True, exclude_none=True, mode="json"))
    if field:
        return _error(ident, types.INVALID_PARAMS, not_unicode_message(field))
    return _error(ident, types.INVALID_REQUEST, "Invalid request: not a JSON-RPC message this server can read.")


def _id_problem(line: str) -> types.JSONRPCMessage | None:
    """A request whose ``id`` is an object, a list, a fraction, a boolean or null: the SDK's parser reads it as a
    notification (its model ignores the unknown ``id``) and answers nothing, so the client would wait for ever.
    MCP requires a string or whole-number id; this is answered as an invalid request with ``id: null``."""
    try:
        msg = json.loads(line, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return None
    if not isinstance(msg, dict) or "id" not in msg:
        return None  # a real notification that mentions "id" somewhere in its params
    log.warning("refused a request whose id is %s", type(msg["id"]).__name__)
    return _error(None, types.INVALID_REQUEST,
                  'Invalid request: "id" must be a string or a whole number (got '
                  f"{_json_shown(msg['id'])}).")


def _json_shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _fits(ident: int | str) -> bool:
    if isinstance(ident, str):
        return not has_lone_surrogate(ident)
    return -(2**63) <= ident < 2**63


def _error(ident: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=ident, error=types.ErrorData(code=code, message=message))


class CheckedInput(anyio.AsyncFile[str]):
    """The client's lines as the SDK reads them, minus those it cannot parse, which are answered here."""

    def __init__(self, fp: TextIO) -> None:
        super().__init__(fp)
        self.replies: MemoryObjectSendStream[SessionMessage] | None = None
        self.ready = anyio.Event()

    def connect(self, replies: MemoryObjectSendStream[SessionMessage]) -> None:
        self.replies = replies
        self.ready.set()

    async def readline(self) -> str:
        while True:
            line = await super().readline()
            if not line or not line.strip():
                if not line:
                    return line
                continue
            answer = answer_for(line)
            if answer is None:
                return line
            await self.ready.wait()
            assert self.replies is not None
            await self.replies.send(SessionMessage(answer))


def claim_stdin() -> CheckedInput:
    """The client's stdin on a private descriptor (fd 0 then reads the null device), checked line by line."""
    private = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    raw = os.fdopen(private, "rb", closefd=True)
    return CheckedInput(io.TextIOWrapper(raw, encoding="utf-8", errors="replace"))
