"""Paths as the library stores them: one normalisation, one "inside a folder" rule, one index range (no Qt, no I/O
beyond ``expanduser``/``abspath``).

Why one module: a dropped, typed or MCP-named path is compared with library folders, exclusions and pending
removals in the store, the scheduler, the walk, the watcher and the GUI. When each wrote its own test, they
disagreed at the edges (the OS separator or the folder's own, a root folder, a trailing separator), and a folder
``notes`` could be taken to hold ``notes2``. Everything here is a *string* rule: a stored path may be gone from
disk, or (a shared library) come from another machine, so nothing is resolved against the file system.

A stored path is absolute and normalised (:func:`normalise`: no ``..``, no trailing separator) in the separator
of the machine that read it; a Windows path is recognised by its backslashes (:func:`separator`), so a Windows
library is judged as Windows does on any machine. Comparison is case-sensitive, like the store's path index.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from types import ModuleType


def normalise(path: str | os.PathLike[str], pathmod: ModuleType = os.path) -> str:
    """The one form a path takes when it enters from outside (a drop, an argument, a typed filter, MCP): ``~``
    expanded, made absolute against the working directory, ``..`` and doubled separators folded. Links are *not*
    resolved: a stored path keeps the name its library folder was given (paths_guard checks where links lead).
    ``pathmod`` is ``os.path`` except in tests of the other platform's rules (``ntpath``/``posixpath``)."""
    text: str = pathmod.expanduser(os.fspath(path))
    return str(pathmod.abspath(text))


def separator(path: str) -> str:
    """The separator a stored path uses: a backslash only for a Windows path (backslashes and no slash)."""
    return "\\" if ("\\" in path and "/" not in path) else "/"


def below(folder: str) -> str:
    """The prefix every path strictly below ``folder`` starts with: the folder without its trailing separators,
    plus one (``/a/b/`` and ``/a/b`` give ``/a/b/``; the root ``/`` gives ``/``, ``C:\\`` gives ``C:\\``)."""
    sep = separator(folder)
    return folder.rstrip(sep) + sep


def is_inside(path: str, folder: str) -> bool:
    """True when ``path`` is ``folder`` or lies below it, by whole components (``/a/bc`` is not inside ``/a/b``),
    in the separator the folder's path uses. Both are expected normalised (a ``..`` is not folded here)."""
    prefix = below(folder)
    return path in (folder, prefix[:-1]) or path.startswith(prefix)


def inside_any(path: str, folders: Iterable[str]) -> bool:
    """True when ``path`` is one of ``folders`` or lies below one of them (:func:`is_inside`)."""
    return any(is_inside(path, f) for f in folders)


def prefix_range(folder: str) -> tuple[str, str]:
    """The half-open string range ``[lo, hi)`` holding exactly the paths strictly below ``folder`` (the folder
    itself excluded): ``lo`` is :func:`below`, ``hi`` the same with its separator replaced by the next character.
    For ``/x/notes`` that is ``["/x/notes/", "/x/notes0")``, which ``/x/notes2/a`` and ``/x/notes-a`` fall outside.
    Why: a range on the store's path index reads only the matching rows; a ``substr`` or ``like`` test scans
    every document (the watcher asks once per deleted file: 1.6 s for 1,000 deletions in 5,000 files)."""
    lo = below(folder)
    return lo, lo[:-1] + chr(ord(lo[-1]) + 1)


__all__ = ["below", "inside_any", "is_inside", "normalise", "prefix_range", "separator"]
