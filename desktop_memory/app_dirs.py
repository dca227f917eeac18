"""Folders the app writes to besides the settings and the database (config.py has those): the logs and the cache.

One place for each name, so the app that writes there and ``desktop-memory paths`` that shows them cannot disagree.
"""

from __future__ import annotations

from pathlib import Path

from .config import data_dir

GUI_LOG = "gui.log"  # rotated to gui.log.1, gui.log.2 (gui/app.py)
# in the data folder: the bundled model's check (embed/model_check.py), what rerank servers want (retrieve/rerank.py)
MODEL_CHECK_FILE = "model-check.json"
RERANK_SERVERS_FILE = "rerank-servers.json"


def log_dir() -> Path:
    """The app's logs (the window's gui.log; the CLI and the MCP server log to stderr only)."""
    return data_dir() / "logs"
