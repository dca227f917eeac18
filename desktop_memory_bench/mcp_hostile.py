"""How fast the MCP server answers hostile lines (issue 21 §3: "an answer within a second"): a small library made
in a temp folder, the real server (`python -m desktop_memory.cli mcp`) on a raw stdio pipe, each line sent
``--repeat`` times; prints the median and worst time to its answer line.

    python -m desktop_memory_bench.mcp_hostile
"""

from __future__ import annotations

import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from desktop_memory.config import EmbedderSettings, Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.service import MemoryService
from desktop_memory.settings_file import save_settings

REPO = Path(__file__).resolve().parents[1]


def _call(ident: int, tool: str, arguments: str) -> str:
    params = '{"name":"' + tool + '","arguments":' + arguments + "}"
    return '{"jsonrpc":"2.0","id":' + str(ident) + ',"method":"tools/call","params":' + params + "}"


LINES = {
    "lone surrogate in query": _call(1, "search", r'{"query":"\ud800"}'),
    "id 2**70": _call(2, "get_passage", '{"id":' + str(2**70) + "}"),
    "top_k 500": _call(3, "search", '{"query":"x","top_k":500}'),
    "not JSON": "this is not json {",
    "path /etc": _call(4, "search", '{"query":"x","path":"/etc"}'),
    "glob ../../etc/passwd": _call(5, "search", '{"query":"x","glob":"../../etc/passwd"}'),
    "age of 400 nines": _call(6, "search", '{"query":"x","modified_since":"' + "9" * 400 + 'd"}'),
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        notes = base / "notes"
        notes.mkdir()
        (notes / "a.md").write_text("# A\n\nThe harbour bridge opens in spring.\n")
        os.environ["DESKTOP_MEMORY_CONFIG_DIR"] = str(base / "config")
        settings = Settings(db_path=str(base / "m.db"), embedder=EmbedderSettings(kind="hash"))
        svc = MemoryService(settings, embedder=HashEmbedder(64))
        svc.index_paths([notes])
        svc.close()
        save_settings(settings)
        env = dict(os.environ, PYTHONPATH=str(REPO))
        proc = subprocess.Popen([sys.executable, "-m", "desktop_memory.cli", "mcp"], cwd=REPO, env=env,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdin is not None and proc.stdout is not None

        def ask(line: str) -> float:
            assert proc.stdin is not None and proc.stdout is not None
            t0 = time.perf_counter()
            proc.stdin.write(line.encode() + b"\n")
            proc.stdin.flush()
            ready, _, _ = select.select([proc.stdout], [], [], 60)
            if not ready:
                return float("inf")
            json.loads(proc.stdout.readline())
            return time.perf_counter() - t0

        ask('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
            '"capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}')
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        proc.stdin.flush()
        print(f"{'line':<26} {'median ms':>10} {'worst ms':>9}")
        for name, line in LINES.items():
            times = [ask(line) for _ in range(args.repeat)]
            print(f"{name:<26} {statistics.median(times) * 1000:>10.1f} {max(times) * 1000:>9.1f}")
        proc.stdin.close()
        proc.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
