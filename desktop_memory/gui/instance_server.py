"""The running app's end of single-instance handoff: a QLocalServer that turns JSON lines into a signal.

See single_instance.py for the protocol and why the sending side may be plain stdlib.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from .single_instance import hand_off_to

log = logging.getLogger(__name__)

MAX_MESSAGE = 64 * 1024  # a dropped folder list, not a stream


class InstanceServer(QObject):
    """Emits ``message(dict)`` for each request a second process sends; answers ``ok`` once it is queued."""

    message = Signal(object)

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)  # owner only
        self.server.newConnection.connect(self._accept)
        self._buffers: dict[QLocalSocket, bytes] = {}

    def start(self) -> bool:
        if self.server.listen(self.name):
            return True
        if hand_off_to(self.name, {"cmd": "ping"}):  # someone else is really serving this library
            log.info("another instance already serves %s", self.name)
            return False
        QLocalServer.removeServer(self.name)  # a stale socket left by a crash
        if self.server.listen(self.name):
            return True
        log.warning("single instance: cannot listen on %s: %s", self.name, self.server.errorString())
        return False

    def close(self) -> None:
        self.server.close()

    def _accept(self) -> None:
        while self.server.hasPendingConnections():
            sock = self.server.nextPendingConnection()
            self._buffers[sock] = b""
            sock.readyRead.connect(lambda s=sock: self._read(s))
            sock.disconnected.connect(lambda s=sock: self._drop(s))

    def _read(self, sock: QLocalSocket) -> None:
        data = self._buffers.get(sock, b"") + bytes(sock.readAll().data())
        if b"\n" not in data and len(data) < MAX_MESSAGE:
            self._buffers[sock] = data
            return
        line = data.split(b"\n", 1)[0]
        self._buffers[sock] = b""
        try:
            msg: Any = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            msg = None
        if not isinstance(msg, dict) or not isinstance(msg.get("cmd"), str):
            sock.write(b"error\n")
            sock.flush()
            return
        sock.write(b"ok\n")
        sock.flush()
        if msg["cmd"] != "ping":
            self.message.emit(msg)

    def _drop(self, sock: QLocalSocket) -> None:
        self._buffers.pop(sock, None)
        sock.deleteLater()
