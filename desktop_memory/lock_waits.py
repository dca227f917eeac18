"""The database's lock as a front end sees it: a notice while a write waits its turn, and a quick look before opening.

The store owns both (store/connection.py, offered by store/open.py); the front ends, which never import the store
(the "Front ends reach the core only through the service" contract in pyproject.toml), take them from here: the CLI
and the window tell the person once that a long command waits for another process's writer, and the MCP server
answers "busy" after a short wait instead of hanging a chat on the store's long busy timeout. Importing this loads
the store (apsw), so the window imports it only once its service is open.
"""

from __future__ import annotations

from .store.open import on_busy_wait, probe_busy

__all__ = ["on_busy_wait", "probe_busy"]
