"""Ready-to-paste client configurations for `desktop-memory mcp`, with this installation's real paths.

The README shows them with placeholder paths; the app's Help → "Use in chat apps (MCP)…" shows the same ones
filled in (gui/mcp_dialog.py). Pure functions, no Qt.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from .. import APP_NAME

SERVER_NAME = APP_NAME


@dataclass(frozen=True)
class Snippet:
    client: str  # "Claude Desktop", ...
    where: str  # which file to paste it into
    text: str  # the JSON


def server_command() -> tuple[str, list[str]]:
    """How a chat app starts this installation's MCP server: (command, args before ``mcp``).

    The bundle: the ``desktop-memory`` executable next to the running one. A pip/venv install: the
    ``desktop-memory`` script beside this Python, else on PATH. Otherwise this Python with ``-m``."""
    exe = "desktop-memory.exe" if os.name == "nt" else "desktop-memory"
    here = Path(os.path.abspath(sys.executable)).parent  # not resolved: a venv's python is a symlink
    for c in (here / exe, here / "Scripts" / exe):
        if c.is_file():
            return str(c), []
    found = shutil.which(APP_NAME)
    if found:
        return str(Path(found).resolve()), []
    return sys.executable, ["-m", "desktop_memory.cli"]


def server_args(prefix: list[str], db_path: str | None = None, allow_indexing: bool = False) -> list[str]:
    args = [*prefix, "mcp"]
    if db_path:
        args += ["--db", db_path]
    if allow_indexing:
        args.append("--allow-indexing")
    return args


def snippets(command: str, args: list[str]) -> list[Snippet]:
    """The three configurations: Claude Desktop, VS Code, and the generic ``mcpServers`` form."""
    entry = {"command": command, "args": args}
    generic = json.dumps({"mcpServers": {SERVER_NAME: entry}}, indent=2)
    vscode = json.dumps({"servers": {SERVER_NAME: {"type": "stdio", **entry}}}, indent=2)
    return [
        Snippet("Claude Desktop",
                "claude_desktop_config.json (Claude → Settings → Developer → Edit Config; macOS: ~/Library/"
                "Application Support/Claude/, Windows: %APPDATA%\\Claude\\), then restart Claude",
                generic),
        Snippet("VS Code", ".vscode/mcp.json in a workspace, or the user mcp.json (Command Palette → "
                "\"MCP: Open User Configuration\")", vscode),
        Snippet("Other apps (mcpServers)", "Cursor (~/.cursor/mcp.json), Windsurf, LM Studio (mcp.json), Cline and "
                "most other MCP clients read this mcpServers form", generic),
    ]


def installed_snippets(db_path: str | None = None, allow_indexing: bool = False) -> list[Snippet]:
    """The snippets for this installation (``db_path`` only when the library is not at the default place)."""
    command, prefix = server_command()
    return snippets(command, server_args(prefix, db_path, allow_indexing))
