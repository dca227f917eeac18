"""What the loopback model-server stubs (Ollama, OpenAI-compatible) share: the threaded server, its start and stop,
and a JSON request handler, so that both stubs speak HTTP the same way and only their routes differ."""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar


class QuietServer(ThreadingHTTPServer):
    """Daemon handler threads; a client that hung up (timeout tests) is not worth a traceback."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionError, OSError)):
            super().handle_error(request, client_address)


def serve_in_thread(handler: type[BaseHTTPRequestHandler], port: int,
                    name: str) -> tuple[QuietServer, threading.Thread]:
    """A server on 127.0.0.1:``port`` (0: any free port) answering from a daemon thread, already started."""
    server = QuietServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, name=name, daemon=True)
    thread.start()
    return server, thread


def shut_down(server: ThreadingHTTPServer, thread: threading.Thread | None, stopping: threading.Event) -> None:
    """Wake handlers sleeping on ``stopping`` (delays), stop serving, free the port and wait for the thread."""
    stopping.set()
    server.shutdown()
    server.server_close()
    if thread is not None:
        thread.join(timeout=5)


_S = TypeVar("_S", bound="LoopbackStub")


class LoopbackStub:
    """Start/stop/``with`` for a stub whose ``__init__`` sets ``_server``/``_thread`` to None and ``_stopping`` to an
    Event; the subclass names its handler class (``_handler``) and may prepare before the port opens."""

    thread_name = "LoopbackStub"
    _server: ThreadingHTTPServer | None
    _thread: threading.Thread | None
    _stopping: threading.Event

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    def _before_start(self) -> None:
        """Work to finish before the first request can arrive (e.g. loading a model)."""

    def start(self: _S, port: int = 0) -> _S:
        if self._server is None:
            self._before_start()
            self._stopping.clear()
            self._server, self._thread = serve_in_thread(self._handler(), port, self.thread_name)
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            shut_down(server, self._thread, self._stopping)

    def __enter__(self: _S) -> _S:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class JsonHandler(BaseHTTPRequestHandler):
    """Keep-alive HTTP/1.1 (as real servers: exercises a client's pool on retries), no stderr log; GET/POST go
    to ``_serve(method)``, which subclasses write with ``_read_request`` and ``_json``."""

    protocol_version = "HTTP/1.1"
    json_type = "application/json"

    def log_message(self, format: str, *args: Any) -> None:  # silence stderr
        pass

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        raise NotImplementedError

    def _read_request(self) -> tuple[bytes, Any, str]:
        """The raw body, the body decoded (JSON, else text, None if empty) and the path without its query."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        return raw, body, self.path.split("?", 1)[0]

    def _extra_headers(self) -> dict[str, str]:
        return {}

    def _send(self, status: int, payload: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in self._extra_headers().items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj).encode("utf-8"), self.json_type)
