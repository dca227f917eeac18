"""How a file's path is shown in what leaves the app (the pasted context block, MCP results).

An absolute path names the person's account and folder layout (``/home/alice/…``); pasted into a cloud chat it
leaks more than the passage. The default is the path relative to the indexed folder it came from, prefixed with
that folder's name (``notes/projects/plan.md``); ``absolute`` and ``name`` (file name only) are settings.
"""

from __future__ import annotations

import ntpath
import posixpath
from collections.abc import Iterable
from typing import Literal

from ..paths import is_inside, separator

PathStyle = Literal["relative", "absolute", "name"]
PATH_STYLES: tuple[PathStyle, ...] = ("relative", "absolute", "name")


def _basename(path: str) -> str:
    return ntpath.basename(path) if separator(path) == "\\" else posixpath.basename(path.rstrip("/")) or path


def display_path(path: str, roots: Iterable[str] = (), style: str = "relative") -> str:
    """``path`` as the chosen style shows it. ``relative``: under the longest indexed root that holds it, as
    ``<root folder name>/<rest>``; a file added on its own (no root holds it) shows its name only."""
    if style == "absolute":
        return path
    if style == "name":
        return _basename(path)
    sep = separator(path)
    best = ""
    for root in roots:
        r = root.rstrip("/\\")
        if not r:
            continue
        if is_inside(path, r) and len(r) > len(best):
            best = r
    if not best or path == best:
        return _basename(path)
    rest = path[len(best) + 1:]
    return f"{_basename(best)}/{rest.replace(sep, '/')}"
