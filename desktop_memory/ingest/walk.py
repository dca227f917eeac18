"""Walk the folders a person chose, yielding files to index and one entry per thing skipped (with why).

Design rules: deterministic order (sorted by name, depth first), never raise for one bad entry, never open
anything while walking (only ``stat``), so a FIFO or a device cannot hang the scan. Directories that are skipped
produce ONE entry (``is_dir=True``) rather than one per file inside them.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..config import IngestSettings
from ..paths import is_inside, normalise
from .detect import binary_extension
from .ignore import IgnoreRules

MIB = 1024 * 1024

# Folder names skipped wherever they appear (tool caches, VCS metadata, dependency trees, build output).
IGNORED_DIRS = frozenset({
    ".git", ".hg", ".svn", ".bzr", "CVS", "node_modules", "bower_components", "__pycache__", ".venv",
    ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".idea", ".vscode", "dist", "build",
    ".cache", "site-packages", ".eggs", ".gradle", ".terraform", ".next", ".nuxt",
})
_WIN_HIDDEN = 0x2  # FILE_ATTRIBUTE_HIDDEN


@dataclass
class WalkEntry:
    """One file to index (``skip_reason is None``) or one skipped file/folder and why."""

    path: str  # absolute (os.path.abspath), symlinks NOT resolved
    size: int
    mtime: float
    skip_reason: str | None
    is_dir: bool = False


def walk_paths(paths: Iterable[str | Path], settings: IngestSettings,
               excluded: Collection[str] = ()) -> Iterator[WalkEntry]:
    """Yield entries for every file under ``paths`` (files or folders), in a stable order.

    Paths the user named explicitly are never skipped for being hidden or on the ignore list.
    A file reachable twice (named twice, or through a followed symlink) is yielded once.
    ``excluded``: paths the person removed from the library (store/folders.py): left out silently, with
    everything below them (they are not "skipped" files: the person chose, the Library lists them as excluded).
    """
    walker = _Walker(settings, excluded)
    for p in paths:
        yield from walker.walk_root(p)


def format_size_reason(size: int, limit_mb: float) -> str:
    return f"too large: {size / MIB:.1f} MB (limit {limit_mb:g} MB)"


def has_surrogates(name: str) -> bool:
    """True when a file name holds bytes that are not valid in the file-system encoding (surrogate escapes)."""
    return any("\udc80" <= ch <= "\udcff" for ch in name)


def printable_path(path: str) -> str:
    """``path`` with undecodable bytes written as ``\\xNN`` escapes: storable, printable, JSON-able (not openable).

    Only for paths we skip: SQLite, JSON and terminals cannot take the lone surrogates Python uses for them."""
    if not any("\ud800" <= ch <= "\udfff" for ch in path):
        return path
    try:
        return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate outside the surrogateescape range (not from the file system)
        return path.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def special_file_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    return "special file"


def _os_error_reason(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return "not found"
    if isinstance(exc, PermissionError):
        return "permission denied"
    if exc.errno == errno.ELOOP:
        return "symlink loop"
    return f"cannot access: {exc.strerror or exc}"


class _Walker:
    def __init__(self, settings: IngestSettings, excluded: Collection[str] = ()) -> None:
        self.settings = settings
        self.excluded = frozenset(excluded)
        self.size_limit = int(settings.max_file_mb * MIB)
        self.patterns = [p for p in (settings.extra_ignore or ()) if p]
        self.rules: IgnoreRules | None = None  # gitignore-style rules of the folder being walked (ingest/ignore.py)
        self.visited_dirs: dict[tuple[int, int], str] = {}
        self.seen_files: set[str] = set()

    # -- roots ---------------------------------------------------------------------------------------------

    def walk_root(self, raw: str | Path) -> Iterator[WalkEntry]:
        path = normalise(raw)
        if self.excluded and any(is_inside(path, x) for x in self.excluded):
            return
        if has_surrogates(path):  # as for any other file or folder whose name is not valid text
            is_dir = os.path.isdir(path)
            yield WalkEntry(path, 0, 0.0, "file name is not valid text (undecodable bytes)", is_dir=is_dir)
            return
        try:
            st = os.stat(path)  # a symlink the user named explicitly is followed
        except OSError as exc:
            reason = _os_error_reason(exc)
            if reason == "not found" and os.path.lexists(path):
                reason = "broken symlink"
            yield WalkEntry(path, 0, 0.0, reason, is_dir=False)
            return
        if stat.S_ISDIR(st.st_mode):
            yield from self._walk_tree(path, st)
        else:
            entry = self._file_entry(path, st)
            if entry is not None:
                yield entry

    # -- directories ---------------------------------------------------------------------------------------

    def _walk_tree(self, root: str, root_st: os.stat_result) -> Iterator[WalkEntry]:
        key = (root_st.st_dev, root_st.st_ino)
        if key in self.visited_dirs:
            return  # the same folder named twice, or nested inside an earlier root: already walked
        self.visited_dirs[key] = root
        self.rules = IgnoreRules(root, self.patterns, self.settings.use_ignore_files)
        self.rules.enter(root)
        children, problem = self._list_dir(root, root_st)
        if problem:
            yield problem
            return
        stack: list[tuple[Iterator[os.DirEntry[str]], frozenset[tuple[int, int]]]] = [
            (iter(children), frozenset({key}))
        ]
        while stack:
            it, ancestors = stack[-1]
            entry = next(it, None)
            if entry is None:
                stack.pop()
                continue
            outcome = self._classify(entry, ancestors)
            if isinstance(outcome, WalkEntry):
                yield outcome
            elif outcome is not None:
                sub_path, sub_st = outcome
                sub_key = (sub_st.st_dev, sub_st.st_ino)
                self.visited_dirs[sub_key] = sub_path
                if self.rules is not None:
                    self.rules.enter(sub_path)
                sub_children, problem = self._list_dir(sub_path, sub_st)
                if problem:
                    yield problem
                else:
                    stack.append((iter(sub_children), ancestors | {sub_key}))

    def _list_dir(self, path: str, st: os.stat_result) -> tuple[list[os.DirEntry[str]], WalkEntry | None]:
        try:
            with os.scandir(path) as it:
                return sorted(it, key=lambda e: e.name), None
        except OSError as exc:
            return [], WalkEntry(path, 0, st.st_mtime, _os_error_reason(exc), is_dir=True)

    # -- one directory entry -------------------------------------------------------------------------------

    def _classify(
        self, entry: os.DirEntry[str], ancestors: frozenset[tuple[int, int]]
    ) -> WalkEntry | tuple[str, os.stat_result] | None:
        """A WalkEntry to yield, a (path, stat) folder to descend into, or None (already yielded)."""
        path = entry.path
        if path in self.excluded:  # removed from the library by the person: not walked, not recorded
            return None
        try:
            lst = entry.stat(follow_symlinks=False)
        except OSError as exc:
            return WalkEntry(path, 0, 0.0, _os_error_reason(exc))
        st = lst
        if stat.S_ISLNK(lst.st_mode):
            target = self._follow(path, lst)
            if isinstance(target, WalkEntry):
                return target
            st = target
        is_dir = stat.S_ISDIR(st.st_mode)
        if has_surrogates(entry.name):
            return WalkEntry(path, 0, st.st_mtime, "file name is not valid text (undecodable bytes)", is_dir)
        reason = self._name_reason(entry.name, path, st, is_dir)
        if reason:
            return WalkEntry(path, 0 if is_dir else st.st_size, st.st_mtime, reason, is_dir)
        if not is_dir:
            return self._file_entry(path, st)
        key = (st.st_dev, st.st_ino)
        if key in ancestors:
            return WalkEntry(path, 0, st.st_mtime, "symlink loop", is_dir=True)
        if key in self.visited_dirs:
            return WalkEntry(path, 0, st.st_mtime, f"already included as {self.visited_dirs[key]}", is_dir=True)
        return path, st

    def _follow(self, path: str, lst: os.stat_result) -> WalkEntry | os.stat_result:
        """Stat a symlink's target, or the entry that says why we don't."""
        try:
            target = os.stat(path)
        except OSError as exc:
            reason = _os_error_reason(exc)
            return WalkEntry(path, 0, lst.st_mtime, "broken symlink" if reason == "not found" else reason)
        if not self.settings.follow_symlinks:
            is_dir = stat.S_ISDIR(target.st_mode)
            return WalkEntry(path, 0, lst.st_mtime, "symlink (not followed)", is_dir=is_dir)
        return target

    def _name_reason(self, name: str, path: str, st: os.stat_result, is_dir: bool) -> str | None:
        """Skip rules that depend on the name (and, for a few tool folders, on what sits beside/inside them)."""
        if is_dir and name in IGNORED_DIRS:
            return f"ignored folder ({name})"
        if name.startswith(".") or getattr(st, "st_file_attributes", 0) & _WIN_HIDDEN:
            return "hidden folder" if is_dir else "hidden file"
        ignored = self.rules.reason(path, is_dir) if self.rules is not None else None
        if ignored:
            return ignored
        if is_dir:
            return self._tool_dir_reason(name, path)
        return None

    @staticmethod
    def _tool_dir_reason(name: str, path: str) -> str | None:
        # Any folder holding pyvenv.cfg is a virtual environment, whatever its name ("venv", "env", "py311").
        if os.path.isfile(os.path.join(path, "pyvenv.cfg")):
            return "ignored folder (Python virtual environment)"
        if name == "target" and os.path.isfile(os.path.join(os.path.dirname(path), "Cargo.toml")):
            return "ignored folder (Rust build output)"
        return None

    # -- files ---------------------------------------------------------------------------------------------

    def _file_entry(self, path: str, st: os.stat_result) -> WalkEntry | None:
        if path in self.seen_files:
            return None
        self.seen_files.add(path)
        size, mtime = st.st_size, st.st_mtime
        if not stat.S_ISREG(st.st_mode):
            return WalkEntry(path, 0, mtime, f"not a regular file ({special_file_kind(st.st_mode)})")
        ext = binary_extension(path)
        if ext:
            return WalkEntry(path, size, mtime, f"binary file ({ext})")
        if size > self.size_limit:
            return WalkEntry(path, size, mtime, format_size_reason(size, self.settings.max_file_mb))
        if not os.access(path, os.R_OK):
            return WalkEntry(path, size, mtime, "permission denied")
        return WalkEntry(path, size, mtime, None)


def gone_as_file(path: str) -> bool:
    """A recorded file that is no longer there as a file: deleted, or replaced by a folder of the same name
    (``rm x.md; mkdir x.md``). The index, the catch-up scan and the watcher all ask this one question."""
    return not os.path.lexists(path) or os.path.isdir(path)


_NO_STAT = os.stat_result((0,) * 10)  # stands in for a path that is gone: no attributes, judged by name


def name_skip_reason(path: str, root: str, settings: IngestSettings) -> str | None:
    """Why a walk of ``root`` would leave out ``path`` (a file or folder inside it, which may be gone already)
    because of its own name or the name of a folder on the way down, or None when the walk would reach it.

    The folder watcher asks this for every changed path, so a change under ``.git/``, ``node_modules/`` or a
    hidden folder is ignored by exactly the rules a walk applies (one place decides, not two). File-level rules
    (binary, too large, special file) are left to indexing, which applies them to a file named explicitly too."""
    rel = os.path.relpath(path, root)
    if rel == os.curdir:
        return None
    if rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
        return "outside the folder"
    walker = _Walker(settings)
    walker.rules = IgnoreRules(root, walker.patterns, settings.use_ignore_files)
    walker.rules.enter(root)  # the person's patterns and .gitignore/.dmignore, as a walk of root applies them
    parts = rel.split(os.sep)
    current = root
    for depth, name in enumerate(parts):
        current = os.path.join(current, name)
        last = depth == len(parts) - 1
        if has_surrogates(name):
            return "file name is not valid text (undecodable bytes)"
        try:
            st = os.stat(current)
        except OSError:  # gone already (a deletion, the old side of a rename): judge it by its name
            st = None
        is_dir = stat.S_ISDIR(st.st_mode) if st is not None else not last
        reason = walker._name_reason(name, current, st if st is not None else _NO_STAT, is_dir)
        if reason:
            return reason
        if st is not None and os.path.islink(current) and not settings.follow_symlinks:
            return "symlink (not followed)"
        if is_dir and not last:
            walker.rules.enter(current)
    return None
