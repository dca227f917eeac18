"""The running app's end of single-instance handoff: a QLocalServer that turns JSON lines into a signal.

Each line is checked against the schema (single_instance.parse_request: size and depth capped, ``cmd`` one of a
few, ``paths`` a short list of absolute paths); anything else is answered ``error: <why>`` and logged, never raised.

See single_instance.py for the protocol and why the sending side may be plain stdlib.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from .single_instance import MAX_MESSAGE, BadRequest, hand_off_to, parse_request

log = logging.getLogger(__name__)


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
        self._refused: set[QLocalSocket] = set()

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
        if b"\n" not in data and len(data) <= MAX_MESSAGE:
            self._buffers[sock] = data
            return
        line = data.split(b"\n", 1)[0]
        self._buffers[sock] = b""
        try:
            request = parse_request(line)
        except BadRequest as exc:
            self._refuse(sock, str(exc))
            return
        sock.write(b"ok\n")
        sock.flush()
        if request.cmd != "ping":
            self.message.emit({"cmd": request.cmd, "paths": list(request.paths)} if request.cmd == "show"
                              else {"cmd": request.cmd})

    def _refuse(self, sock: QLocalSocket, why: str) -> None:
        """Answer ``error`` and log it, once per connection; the rest of what it sends is not read."""
        sock.write(f"error: {why}\n".encode())
        sock.flush()
        if sock not in self._refused:
            self._refused.add(sock)
            log.warning("single instance: refused a request: %s", why)
        sock.readyRead.disconnect()
        sock.disconnectFromServer()

    def _drop(self, sock: QLocalSocket) -> None:
        self._buffers.pop(sock, None)
        self._refused.discard(sock)
        sock.deleteLater()
