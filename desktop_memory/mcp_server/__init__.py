"""The MCP server front end: the memory as tools for chat apps and agents (``desktop-memory mcp``).

A sibling of the CLI and the GUI over the same service; no Qt. See docs/MCP.md.
"""

from .server import build_server, serve

__all__ = ["build_server", "serve"]
