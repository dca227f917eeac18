"""Opening a database that cannot be written: read-only media, a read-only file, a disk that is already full.

Reading needs no space and no write access, so search keeps working; writes are refused up front with the reason
(see ``Store.mode``). The one obstacle is WAL mode: SQLite needs the ``-shm`` index to read a ``-wal`` file.
- no ``-wal`` (or an empty one): the main file is the whole database; it is opened ``immutable`` (no locks, no
  ``-shm``), which is exact;
- a ``-wal`` with its ``-shm`` beside it: a plain read-only open reads both (SQLite >= 3.22);
- a ``-wal`` without ``-shm`` that cannot be created: the database and its ``-wal`` are copied to a private
  temporary folder and that snapshot is opened, so documents still in the ``-wal`` are not hidden; when the copy
  does not fit, the file is opened ``immutable`` and the note says that recent changes are not visible.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
import weakref
from pathlib import Path

import apsw

READ_ONLY = "read-only"
DISK_FULL = "disk-full"
LOW_SPACE_BYTES = 256 * 1024  # below this, SQLite cannot even create its -shm index: treat the disk as full
MAX_SNAPSHOT_BYTES = 2 * 1024**3

# why a connection was opened read-only, for the one note the front ends show
_NOTES: weakref.WeakKeyDictionary[apsw.Connection, tuple[str, str]] = weakref.WeakKeyDictionary()


def disk_is_full(path: Path) -> bool:
    try:
        return shutil.disk_usage(path.parent).free < LOW_SPACE_BYTES
    except OSError:
        return False


def on_read_only_media(path: Path) -> bool:
    """The database file exists on a file system mounted read-only."""
    try:
        return path.is_file() and bool(os.statvfs(path.parent).f_flag & os.ST_RDONLY)
    except (AttributeError, OSError):  # no statvfs (Windows)
        return False


def mode_of(conn: apsw.Connection) -> tuple[str, str] | None:
    """(READ_ONLY or DISK_FULL, the note to show once) for a connection opened by ``open_fallback``."""
    return _NOTES.get(conn)


def mark(conn: apsw.Connection, mode: str, note: str) -> None:
    _NOTES[conn] = (mode, note)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _open(target: str, *, uri: bool = False) -> apsw.Connection:
    flags = apsw.SQLITE_OPEN_READONLY | (apsw.SQLITE_OPEN_URI if uri else 0)
    conn = apsw.Connection(target, flags=flags)
    conn.execute("pragma schema_version").fetchone()  # opens the file now: errors say what they are
    return conn


def open_fallback(path: Path, mode: str) -> apsw.Connection:
    """Open ``path`` for reading when it cannot be opened for writing (``mode``: READ_ONLY or DISK_FULL)."""
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    why = ("the disk holding it is full" if mode == DISK_FULL else "it cannot be written here (read-only file or "
           "file system)")
    base = f"The database {path} is open read-only because {why}: searching works; indexing and changes are off."
    if _size(wal) == 0:
        conn = _open(f"{path.absolute().as_uri()}?immutable=1", uri=True)
        mark(conn, mode, base)
        return conn
    if shm.exists():
        try:
            conn = _open(str(path))
            mark(conn, mode, base)
            return conn
        except apsw.Error:
            pass
    snapshot = _snapshot(path, wal)
    if snapshot is not None:
        conn = _open(str(snapshot))
        mark(conn, mode, base + " (Reading a private copy, so changes still in its -wal file are included.)")
        return conn
    conn = _open(f"{path.absolute().as_uri()}?immutable=1", uri=True)
    mark(conn, mode, base + " Changes still in its -wal file are not visible until it is opened where it can "
                            "be written.")
    return conn


_SNAPSHOTS: dict[tuple[str, int, int, int], Path] = {}  # one copy per database state, shared by its connections
_SNAPSHOTS_LOCK = threading.Lock()


def _snapshot(path: Path, wal: Path) -> Path | None:
    """A private copy of the database and its -wal (one per process and state: the service's writer and readers
    share it), or None when it does not fit."""
    try:
        key = (str(path.absolute()), _size(path), _size(wal), wal.stat().st_mtime_ns)
    except OSError:
        return None
    with _SNAPSHOTS_LOCK:
        known = _SNAPSHOTS.get(key)
        if known is not None and known.exists():
            return known
        made = _copy(path, wal)
        if made is not None:
            _SNAPSHOTS[key] = made
        return made


def _copy(path: Path, wal: Path) -> Path | None:
    need = _size(path) + _size(wal)
    tmp = Path(tempfile.gettempdir())
    try:
        if need > MAX_SNAPSHOT_BYTES or shutil.disk_usage(tmp).free < need + 64 * 1024**2:
            return None
        folder = Path(tempfile.mkdtemp(prefix="desktop-memory-ro-"))
    except OSError:
        return None
    atexit.register(shutil.rmtree, folder, True)
    target = folder / path.name
    try:
        shutil.copyfile(path, target)
        shutil.copyfile(wal, Path(f"{target}-wal"))
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        return None
    return target
