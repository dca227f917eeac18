"""The one check every path from outside the walk passes before it reaches the indexer or a filter.

Entry points: MCP ``index_path`` and its path/folder/glob arguments, the single-instance socket's ``show``, CLI
arguments and GUI drops (all through ``MemoryService.index_paths``). Why one function: the walk never follows a
symlink unless ``[ingest] follow_symlinks`` says so, and a path named from outside must not be a way around that.
A path inside a library folder is checked by its *real* path: it must lie inside the real path of that folder, and
with symlinks off no component below the folder may be a symlink. One rule, one message (``not_in_library``).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence

from .errors import OutsideLibrary
from .paths import is_inside, normalise


def not_in_library(shown: str) -> str:
    """The one message for every refused path, whichever entry point it came through."""
    return (f"{shown!r} is not a folder in the library: name a library folder, or a file or folder inside one "
            "(a link leading out of it is not followed).")


def owning_root(path: str, roots: Sequence[str]) -> str | None:
    """The deepest library folder holding ``path`` by name, or None."""
    found = [r for r in roots if is_inside(path, os.path.abspath(r))]
    return max(found, key=len) if found else None


def _symlink_below(root: str, path: str) -> bool:
    """True when a component of ``path`` below ``root`` (``root`` itself excluded) is a symlink."""
    rel = os.path.relpath(path, root)
    if rel == os.curdir:
        return False
    current = root
    for part in rel.split(os.sep):
        current = os.path.join(current, part)
        if os.path.islink(current):
            return True
    return False


def _escapes(root: str, path: str, follow_symlinks: bool) -> bool:
    if follow_symlinks:  # the walk follows links anywhere under this setting: so may a named path
        return False
    if _symlink_below(root, path):
        return True
    return not is_inside(os.path.realpath(path), os.path.realpath(root))


def checked_path(raw: str | os.PathLike[str], roots: Sequence[str], *, follow_symlinks: bool,
                 may_add: bool, shown: str | None = None) -> str:
    """``raw`` as an absolute path (not resolved: stored paths keep the folder's own name) when it may be indexed
    or used as a filter; raises ``OutsideLibrary`` otherwise.

    ``may_add``: the person named it themselves (CLI, drop, a launch with paths) and may add a new library folder;
    MCP and filters may not. A path reaching a library folder through another name (a symlinked alias of the
    folder) is given back under the folder's own name, so it is never indexed twice."""
    text = os.fspath(raw)
    label = text if shown is None else shown
    path = normalise(text)
    root = owning_root(path, roots)
    if root is not None:
        if _escapes(os.path.abspath(root), path, follow_symlinks):
            raise OutsideLibrary(not_in_library(label))
        return path
    real = os.path.realpath(path)
    for r in sorted(roots, key=len, reverse=True):
        real_root = os.path.realpath(r)
        if is_inside(real, real_root):
            inside = os.path.normpath(os.path.join(os.path.abspath(r), os.path.relpath(real, real_root)))
            if not _escapes(os.path.abspath(r), inside, follow_symlinks):
                return inside
    if may_add:
        return path
    raise OutsideLibrary(not_in_library(label))


def checked_glob(glob: str, roots: Sequence[str]) -> str:
    """A path glob for a filter: no ``..`` component, and an absolute one must start inside a library folder.
    A relative glob (``*.md``, ``notes/*/plan*.pdf``) matches below any folder; it is returned as written."""
    text = glob.strip()
    parts = [p for p in text.replace("\\", "/").split("/") if p]
    if ".." in parts or text.startswith("~"):
        raise OutsideLibrary(not_in_library(glob))
    if posixpath.isabs(text.replace("\\", "/")) or os.path.isabs(text):
        fixed = text.split("*", 1)[0].split("?", 1)[0].split("[", 1)[0]
        base = fixed if fixed.endswith(("/", "\\")) else os.path.dirname(fixed)
        if not any(is_inside(os.path.abspath(r), base.rstrip("/\\") or "/") or
                   is_inside(base.rstrip("/\\") or "/", os.path.abspath(r)) for r in roots):
            raise OutsideLibrary(not_in_library(glob))
    return text
