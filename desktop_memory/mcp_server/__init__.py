"""The MCP server front end: the memory as tools for chat apps and agents (``desktop-memory mcp``).

A sibling of the CLI and the GUI over the same service; no Qt. ``server`` holds the tools (and imports the SDK);
``snippets`` the client configurations, importable by the GUI without loading the SDK. See docs/MCP.md.
"""
