"""One running app per library: a second `desktop-memory-gui` (or `--quick`) hands its request to the first.

The running app listens with a ``QLocalServer`` (a Unix socket in the per-user runtime folder on Linux/macOS, a
named pipe on Windows), readable by its owner only. A new process first tries to hand off: it connects, sends one
JSON line (``{"cmd": "quick"}``, ``{"cmd": "show", "paths": [...]}``) and waits for ``ok``; if that works it exits.

Why the sending side does not use Qt on Linux/macOS: importing QtCore + QtNetwork costs 100-300 ms, most of the
150 ms budget for the popup to appear after the command. A stdlib Unix socket reaches the same QLocalServer with
no Qt import at all (this module imports Qt lazily for that reason). Windows uses ``QLocalSocket``.

The endpoint's name is derived from the config folder and the database path, so a test or a second library
(``--db``) gets its own instance. On POSIX the socket lives only in a folder that is this user's own with mode 0700
(``private_runtime_dir``), and every request line is checked against a small schema (``parse_request``) before
the app acts on it: the socket is how another process reaches the app, so neither is taken on trust.
"""

from __future__ import annotations

import json
import logging
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..instance_endpoint import endpoint, private_dir_problem, private_runtime_dir

if TYPE_CHECKING:  # Qt is imported lazily here (see above)
    from PySide6.QtCore import QObject

    from .instance_server import InstanceServer

HANDOFF_TIMEOUT_S = 1.0
MAX_MESSAGE = 64 * 1024  # one request line: a dropped folder list, not a stream
MAX_DEPTH = 4  # {"cmd": ..., "paths": [...]} nests two deep; anything deeper is not a request
MAX_PATHS = 1000
MAX_PATH_CHARS = 4096
COMMANDS = frozenset({"ping", "quick", "show"})
__all__ = ["BadRequest", "Request", "endpoint", "hand_off", "hand_off_to", "make_server", "parse_request",
           "private_dir_problem", "private_runtime_dir"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Request:
    """A request that passed the schema: ``cmd`` one of COMMANDS, ``paths`` absolute paths (``show`` only)."""

    cmd: str
    paths: tuple[str, ...] = ()


class BadRequest(ValueError):
    """A line that is not a request; the message says why (logged once, answered with ``error``)."""


def parse_request(line: bytes) -> Request:
    """One request line checked against the schema, with size and depth capped before ``json`` sees it (a line
    nested 100,000 deep would otherwise end in RecursionError). Raises BadRequest."""
    if len(line) > MAX_MESSAGE:
        raise BadRequest(f"longer than {MAX_MESSAGE} bytes")
    if _depth(line) > MAX_DEPTH:
        raise BadRequest(f"nested deeper than {MAX_DEPTH}")
    try:
        msg: Any = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise BadRequest("not a JSON line") from None
    if not isinstance(msg, dict):
        raise BadRequest("not a JSON object")
    extra = set(msg) - {"cmd", "paths"}
    if extra:
        raise BadRequest(f"unknown field(s) {sorted(extra)[:3]}")
    cmd = msg.get("cmd")
    if cmd not in COMMANDS:
        raise BadRequest(f"cmd must be one of {', '.join(sorted(COMMANDS))}")
    paths = msg.get("paths", [])
    if cmd != "show" and paths:
        raise BadRequest(f"{cmd} takes no paths")
    if not isinstance(paths, list) or len(paths) > MAX_PATHS:
        raise BadRequest(f"paths must be a list of at most {MAX_PATHS} absolute paths")
    for p in paths:
        if (not isinstance(p, str) or not p or len(p) > MAX_PATH_CHARS or "\x00" in p
                or not os.path.isabs(p) or any("\ud800" <= ch <= "\udfff" for ch in p)):
            raise BadRequest(f"paths must be a list of at most {MAX_PATHS} absolute paths")
    return Request(str(cmd), tuple(paths))


def _depth(data: bytes) -> int:
    """The deepest nesting of JSON arrays/objects in ``data`` (brackets inside strings do not count)."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in data:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_DEPTH:
                    return deepest
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


def encode(message: dict[str, Any]) -> bytes:
    return (json.dumps(message) + "\n").encode("utf-8")


def hand_off(db_path: Path | str, message: dict[str, Any], timeout_s: float = HANDOFF_TIMEOUT_S) -> bool:
    """Deliver ``message`` to the app running on this library; True when it acknowledged (this process may exit)."""
    name = endpoint(db_path)
    return hand_off_to(name, message, timeout_s) if name else False


def hand_off_to(name: str, message: dict[str, Any], timeout_s: float = HANDOFF_TIMEOUT_S) -> bool:
    if os.name == "nt" or not hasattr(socket, "AF_UNIX"):
        return _hand_off_qt(name, message, timeout_s)
    if not os.path.exists(name):
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout_s)
            s.connect(name)
            s.sendall(encode(message))
            reply = b""
            while not reply.endswith(b"\n"):
                chunk = s.recv(64)
                if not chunk:
                    break
                reply += chunk
            return reply.strip() == b"ok"
    except OSError:  # stale socket file (the app crashed), refused, timed out
        return False


def _hand_off_qt(name: str, message: dict[str, Any], timeout_s: float) -> bool:
    from PySide6.QtNetwork import QLocalSocket

    sock = QLocalSocket()
    ms = int(timeout_s * 1000)
    sock.connectToServer(name)
    if not sock.waitForConnected(ms):
        return False
    sock.write(encode(message))
    if not sock.waitForBytesWritten(ms) or not sock.waitForReadyRead(ms):
        return False
    return bytes(sock.readAll().data()).strip() == b"ok"


def make_server(db_path: Path | str, parent: QObject | None = None) -> InstanceServer | None:
    """Start listening (an ``InstanceServer``), or None when the endpoint cannot be taken (it is logged)."""
    try:
        from .instance_server import InstanceServer
    except ImportError as exc:  # a Qt build without QtNetwork: every launch is its own app, as before
        logging.getLogger(__name__).warning("single instance off: %s", exc)
        return None

    name = endpoint(db_path)
    if name is None:
        return None
    server = InstanceServer(name, parent)
    return server if server.start() else None
