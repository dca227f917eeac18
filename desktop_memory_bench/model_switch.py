"""The model switch on a real folder (issue 30): nothing lost, search answering throughout.

    python -m desktop_memory_bench.model_switch FOLDER [--work DIR] [--search-every 0.05]

1. FOLDER is indexed with the bundled local model (MiniLM, 384-d) into a fresh library.
2. A mistyped server is tried through the CLI exactly as a person types it (``embedder --kind openai --url
   http://127.0.0.1:9/v1 --model x --test``): exit code, vectors before and after, settings file unchanged?
3. A second, real model is served over HTTP on 127.0.0.1 speaking the OpenAI embeddings API: MiniLM's vectors
   through a fixed random projection to 256 dimensions (another dimension, other vectors). The CLI switches to it
   (``embedder --kind openai --url ... --model minilm-proj256``), then ``embed`` builds its vectors beside the old
   ones while this process searches the library every ``--search-every`` seconds with the settings now configured,
   recording each search's latency and which model answered, until the switch.
4. Switching back to the local model (its vectors kept) and forth again, timed.

Prints one table (docs/BENCHMARKS.md, "Model switch"). Each CLI command runs in its own process, as typed, and the
server in another; this process is the app searching. Settings and library live under ``--work``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np

from .latency import percentile
from .table import render_table

QUERIES = ["how do I declare a path parameter", "dependency injection", "run the app with uvicorn",
           "upload a file", "OAuth2 with password and bearer token", "background tasks after a response",
           "CORS middleware", "validate query parameters with Query", "response model", "testing with TestClient",
           "websockets", "how to deploy with docker", "settings and environment variables", "async def or def",
           "custom exception handlers", "sql databases", "static files", "request body with pydantic models"]
MODEL = "minilm-proj256"
DIM = 256


class ProjectedServer:
    """OpenAI-compatible /v1/embeddings on 127.0.0.1: MiniLM vectors projected to ``DIM`` dimensions."""

    def __init__(self) -> None:
        from desktop_memory.embed import LocalOnnxEmbedder

        self.model = LocalOnnxEmbedder()
        self.model.load()
        rng = np.random.default_rng(30)
        self.projection = np.linalg.qr(rng.standard_normal((384, 384)))[0][:, :DIM].astype(np.float32)
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, code: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # (http.server's name)
                self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                texts = body.get("input")
                texts = [texts] if isinstance(texts, str) else texts
                with server.lock:
                    vecs = server.model.embed_documents(texts) @ server.projection
                self._json(200, {"object": "list", "model": MODEL, "data": [
                    {"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vecs)]})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _vectors(db: Path) -> dict[str, int]:
    from desktop_memory.store import Store

    store = Store(db)
    try:
        return {s.model_id: s.vectors for s in store.models.sets()}
    finally:
        store.close()


def _cli(*args: str) -> tuple[int, float]:
    """A CLI command as a person runs it, in its own process: (exit code, seconds)."""
    t0 = time.perf_counter()
    code = subprocess.run([sys.executable, "-m", "desktop_memory.cli", *args], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, check=False).returncode
    return code, time.perf_counter() - t0


def run(folder: Path, work: Path, every: float) -> list[list[str]]:
    os.environ["DESKTOP_MEMORY_CONFIG_DIR"] = str(work / "config")  # inherited by every CLI process
    os.environ["DESKTOP_MEMORY_DATA_DIR"] = str(work / "data")
    from desktop_memory.config import Settings, settings_path
    from desktop_memory.service import MemoryService
    from desktop_memory.settings_file import load_settings, save_settings

    db = str(work / "switch.db")
    rows: list[list[str]] = []
    save_settings(Settings())
    code, took = _cli("--db", db, "index", str(folder), "-q")
    before = _vectors(Path(db))
    rows.append(["index with the local model", f"{took:.1f} s",
                 f"exit {code}; {sum(before.values()):,} vectors of {', '.join(before)}"])

    saved = settings_path().read_bytes()
    code, took = _cli("--db", db, "embedder", "--kind", "openai", "--url", "http://127.0.0.1:9/v1", "--model", "x",
                      "--test")
    after = _vectors(Path(db))
    rows.append(["failed --test (mistyped URL)", f"exit {code}",
                 f"vectors {sum(before.values()):,} -> {sum(after.values()):,}; settings file "
                 f"{'unchanged' if settings_path().read_bytes() == saved else 'CHANGED'} ({took:.1f} s)"])

    server = subprocess.Popen([sys.executable, "-m", "desktop_memory_bench.model_switch", "--serve"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        code, took = _cli("--db", db, "embedder", "--kind", "openai", "--url", url, "--model", MODEL, "--test")
        rows.append(["switch setting (+ --test)", f"{took:.1f} s",
                     f"exit {code}; vectors {sum(_vectors(Path(db)).values()):,} (nothing cleared)"])
        svc = MemoryService(load_settings(), db_path=Path(db))  # the app, searching with the new setting
        idle = _searches(svc, 2 * len(QUERIES), every)
        t0 = time.perf_counter()
        build = subprocess.Popen([sys.executable, "-m", "desktop_memory.cli", "--db", db, "embed", "-q"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        during = _searches(svc, None, every, until=lambda: build.poll() is not None)
        rows.append(["build beside + switch (`embed`)", f"{time.perf_counter() - t0:.1f} s",
                     f"exit {build.returncode}; vectors now {_vectors(Path(db))}"])
        rows.append(_latency_row("searches before the build", idle))
        rows.append(_latency_row("searches during the build", during))
        after_switch = _searches(svc, len(QUERIES), every)
        rows.append(_latency_row("searches after the switch", after_switch))
        svc.close()
        for kind, more in (("local", ()), ("openai", ("--url", url, "--model", MODEL))):
            code, took = _cli("--db", db, "embedder", "--kind", kind, *more)
            svc = MemoryService(load_settings(), db_path=Path(db))
            rows.append([f"switch back to {kind} (set kept)", f"{took:.1f} s",
                         f"exit {code}; search model {svc.stats().search_model} (process start included)"])
            svc.close()
        svc = MemoryService(load_settings(), db_path=Path(db))
        st = svc.stats()
        rows.append(["stats", f"{len(st.models)} sets",
                     "; ".join(f"{m.model_id}: {m.vectors:,} ({m.bytes / 1e6:.1f} MB)" for m in st.models)])
        svc.close()
    finally:
        server.terminate()
        server.wait(10)
    return rows


def _searches(svc: Any, count: int | None, every: float, until: Callable[[], bool] | None = None) -> dict[str, Any]:
    """Hybrid searches in a loop: latencies, how many had the semantic lane, errors, which models answered."""
    times: list[float] = []
    semantic = errors = old = 0
    i = 0
    while (count is None or i < count) and not (until is not None and until()):
        q = QUERIES[i % len(QUERIES)]
        t0 = time.perf_counter()
        try:
            out = svc.search_outcome(q)
        except Exception:  # counted: the point is that none happen
            errors += 1
        else:
            times.append((time.perf_counter() - t0) * 1000)
            semantic += any("dense" in r.lanes for r in out.results)
            old += any(n.startswith("semantic search uses ") for n in out.notes)  # the old set answered
        i += 1
        if every:
            time.sleep(every)
    return {"times": times, "semantic": semantic, "errors": errors, "old": old}


def _latency_row(label: str, s: dict[str, Any]) -> list[str]:
    t = s["times"]
    return [label, f"{len(t)} answered",
            f"p50 {percentile(t, 50):.0f} ms, p95 {percentile(t, 95):.0f} ms, max {max(t, default=0):.0f} ms; "
            f"{s['semantic']}/{len(t)} with the semantic lane ({s['old']} from the old set); {s['errors']} errors"]


def main(argv: list[str] | None = None) -> int:
    if argv is None and sys.argv[1:] == ["--serve"]:  # the second model's server, in its own process
        server = ProjectedServer()
        print(server.url, flush=True)
        server.thread.join()
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--work", type=Path, default=None, help="folder for the library and settings (default: temp)")
    ap.add_argument("--search-every", type=float, default=0.05, help="pause between searches during the build")
    args = ap.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="dm-switch-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = run(args.folder, work, args.search_every)
    print(render_table(["step", "result", "detail"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
