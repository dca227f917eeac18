"""One running app per library: a second `desktop-memory-gui` (or `--quick`) hands its request to the first.

The running app listens with a ``QLocalServer`` (a Unix socket in the per-user runtime folder on Linux/macOS, a
named pipe on Windows), readable by its owner only. A new process first tries to hand off: it connects, sends one
JSON line (``{"cmd": "quick"}``, ``{"cmd": "show", "paths": [...]}``) and waits for ``ok``; if that works it exits.

Why the sending side does not use Qt on Linux/macOS: importing QtCore + QtNetwork costs 100-300 ms, most of the
150 ms budget for the popup to appear after the command. A stdlib Unix socket reaches the same QLocalServer with
no Qt import at all (this module imports Qt lazily for that reason). Windows uses ``QLocalSocket``.

The endpoint's name is derived from the config folder and the database path, so a test or a second library
(``--db``) gets its own instance.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import tempfile
from pathlib import Path
from typing import Any

from .. import APP_NAME
from ..config import config_dir

HANDOFF_TIMEOUT_S = 1.0


def endpoint(db_path: Path | str) -> str:
    """The server name: an absolute socket path on POSIX, a pipe name on Windows."""
    key = f"{config_dir().resolve()}|{Path(db_path).expanduser().resolve()}"
    digest = hashlib.sha1(key.encode("utf-8")).hexdigest()[:12]
    name = f"{APP_NAME}-{digest}"
    if os.name == "nt":
        return name
    base = os.environ.get("XDG_RUNTIME_DIR") or ""
    if not base or not os.path.isdir(base):
        base = os.path.join(tempfile.gettempdir(), f"{APP_NAME}-{os.getuid()}")
        os.makedirs(base, mode=0o700, exist_ok=True)
    return os.path.join(base, f"{name}.sock")


def encode(message: dict[str, Any]) -> bytes:
    return (json.dumps(message) + "\n").encode("utf-8")


def hand_off(db_path: Path | str, message: dict[str, Any], timeout_s: float = HANDOFF_TIMEOUT_S) -> bool:
    """Deliver ``message`` to the app running on this library; True when it acknowledged (this process may exit)."""
    return hand_off_to(endpoint(db_path), message, timeout_s)


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


def make_server(db_path: Path | str, parent: Any = None) -> Any:
    """Start listening (an ``InstanceServer``), or None when the endpoint cannot be taken (it is logged)."""
    try:
        from .instance_server import InstanceServer
    except ImportError as exc:  # a Qt build without QtNetwork: every launch is its own app, as before
        logging.getLogger(__name__).warning("single instance off: %s", exc)
        return None

    server = InstanceServer(endpoint(db_path), parent)
    return server if server.start() else None
