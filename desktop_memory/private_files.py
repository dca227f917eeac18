"""Owner-only files and folders (POSIX): the memory holds the text of everything a person indexed.

Why here, at the bottom of the layers: the config (settings.toml), the store (database, -wal, -shm, migration
backups), the GUI's logs and the model-check cache all create files, and each must be readable by its owner only,
whatever the umask. Files are created with mode 0600 from the start (``os.open(..., 0o600)``: never a window in
which they are readable by others); folders the app creates get 0700. An existing folder or file the app owns that
grants group/other access is tightened once, and the caller gets a one-line notice to show.

On Windows, files under the user's profile (``%APPDATA%``, ``%LOCALAPPDATA%``) inherit the profile's ACL, which
already grants access only to the user, SYSTEM and Administrators: nothing is changed there (mode bits mean
nothing on NTFS), and every function here is a no-op.
"""

from __future__ import annotations

import contextlib
import io
import logging.handlers
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

OWNER_DIR = 0o700
OWNER_FILE = 0o600
POSIX = os.name == "posix"


def make_private_dirs(folder: Path | str) -> None:
    """``mkdir -p`` where every folder created here is 0700 (existing ones are left alone: see ``tighten``)."""
    folder = Path(folder)
    missing: list[Path] = []
    probe = folder
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=OWNER_DIR)
        except FileExistsError:  # created meanwhile by another process: fine
            continue
        if POSIX:
            os.chmod(path, OWNER_DIR)  # mkdir's mode is filtered by the umask; 0700 is exact


def create_private_file(path: Path | str) -> bool:
    """Create ``path`` empty with mode 0600 if it does not exist. True when it was created here."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, OWNER_FILE)
    except FileExistsError:
        return False
    os.close(fd)
    return True


def open_private(path: Path | str, mode: str = "wb", encoding: str | None = None) -> IO[Any]:
    """``open()`` for writing that creates the file 0600 (and truncates it for "w" modes)."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if "a" in mode else os.O_TRUNC)
    fd = os.open(path, flags, OWNER_FILE)
    if POSIX:
        with contextlib.suppress(OSError):
            os.fchmod(fd, OWNER_FILE)  # an existing file keeps its mode through O_CREAT: make it private
    return open(fd, mode, encoding=encoding)  # the caller closes it


def tighten(path: Path | str, *, folder: bool | None = None) -> str | None:
    """Remove group/other permissions from an existing file or folder this user owns.

    Returns what changed ("<path> (644 → 600)") or None when nothing did (already private, missing, a symlink,
    someone else's file, or not POSIX). Never raises: a file we may not chmod is reported as such."""
    if not POSIX:
        return None
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode) or st.st_uid != os.getuid():
        return None
    old = stat.S_IMODE(st.st_mode)
    if not old & 0o077:
        return None
    is_dir = stat.S_ISDIR(st.st_mode) if folder is None else folder
    new = old & 0o700 | (OWNER_DIR if is_dir else OWNER_FILE)
    try:
        os.chmod(path, new)
    except OSError as exc:
        return f"{path} ({old:o}: could not change it: {exc.strerror})"
    return f"{path} ({old:o} → {new:o})"


def tighten_all(paths: list[Path]) -> list[str]:
    """``tighten`` each path that exists; what changed."""
    return [n for n in (tighten(p) for p in paths) if n]


def tightened_notice(changed: list[str]) -> list[str]:
    """One line for the person (CLI stderr, GUI banner) about everything tightened, or nothing."""
    if not changed:
        return []
    return [f"Made your library private to you (other accounts on this computer could read it): {'; '.join(changed)}"]


@contextlib.contextmanager
def owner_only_umask() -> Iterator[None]:
    """Umask 077 for the duration of a file creation we do not control (a library creating its own file).

    The umask is process-wide: keep the block short, and the previous value is always restored."""
    if not POSIX:
        yield
        return
    previous = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(previous)


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A rotating log whose files (the current one and every rotated-in new one) are created 0600."""

    def _open(self) -> io.TextIOWrapper:
        make_private_dirs(Path(self.baseFilename).parent)
        stream = open_private(self.baseFilename, self.mode if "a" in self.mode else "w", encoding=self.encoding)
        if isinstance(stream, io.TextIOWrapper):  # always, for a text mode: the type logging's handler expects
            return stream
        stream.close()
        raise OSError(f"Cannot open the log file {self.baseFilename} as text.")


__all__ = ["OWNER_DIR", "OWNER_FILE", "PrivateRotatingFileHandler", "create_private_file", "make_private_dirs",
           "open_private", "owner_only_umask", "tighten", "tighten_all", "tightened_notice"]
