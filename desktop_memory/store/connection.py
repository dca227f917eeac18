"""Open the one SQLite file: a bundled SQLite (apsw) with sqlite-vec loaded, WAL, sane pragmas.

The stdlib ``sqlite3`` of many Pythons (this one, macOS's system Python) cannot load extensions, so we use apsw,
which bundles its own SQLite with extension loading on every platform. sqlite-vec is loaded and its version checked
on every open, with an error that says what to do if it cannot load.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path

import apsw

from ..config import config_dir, data_dir, settings_path
from ..errors import NotOurDatabase, StoreBusy, StoreDamaged, StoreError, StoreFull, StoreReadOnly
from ..private_files import create_private_file, make_private_dirs, tighten, tighten_all, tightened_notice
from .migrations import preflight
from .readonly import DISK_FULL, READ_ONLY, disk_is_full, mark, mode_of, on_read_only_media, open_fallback
from .sql_values import as_str, scalar

MIN_VEC_VERSION = (0, 1, 6)
# Writers wait their turn: another process (the app, `watch`, another `index`, MCP) holds the write lock for one
# document or one slice of vectors at a time, but three writers taking turns can keep a fourth waiting for longer
# than any short timeout (SQLite's busy wait is not a queue). So a write waits up to BUSY_WAIT_S, says so after
# BUSY_NOTICE_S (on_busy_wait listeners: the CLI prints it), and only then fails with "busy". Ctrl+C stops it.
BUSY_WAIT_S = 600.0
BUSY_NOTICE_S = 3.0

log = logging.getLogger(__name__)
_notice_lock = threading.Lock()
_notice_listeners: list[Callable[[str], None]] = []


def on_busy_wait(fn: Callable[[str], None]) -> Callable[[], None]:
    """Call ``fn(message)`` once per wait that lasts ``BUSY_NOTICE_S``; returns the function that stops it."""
    with _notice_lock:
        _notice_listeners.append(fn)

    def stop() -> None:
        with _notice_lock:
            if fn in _notice_listeners:
                _notice_listeners.remove(fn)

    return stop


def waiting_message(path: Path | str) -> str:
    return f"waiting for another desktop-memory process to finish writing to {path}…"


class WaitTurn:
    """The busy handler of every connection: poll with a short back-off (0.5 → 50 ms, so a waiter gets its turn
    among several quick writers), tell the listeners once after ``notice_s``, give up after ``limit_s``."""

    def __init__(self, path: Path | str, limit_s: float | None = None, notice_s: float | None = None) -> None:
        self.path = path
        self.limit_s = BUSY_WAIT_S if limit_s is None else limit_s
        self.notice_s = BUSY_NOTICE_S if notice_s is None else notice_s
        self._started = 0.0
        self._told = False
        self.abandoned = False  # the library is closing (quit, another database): a waiting write gives up now

    def __call__(self, prior_calls: int) -> bool:
        if self.abandoned:
            return False
        now = time.monotonic()
        if prior_calls == 0:
            self._started, self._told = now, False
        waited = now - self._started
        if waited >= self.limit_s:
            return False  # SQLite answers "busy": translate_error says so in words
        if waited >= self.notice_s and not self._told:
            self._told = True
            message = waiting_message(self.path)
            log.info("%s", message)
            with _notice_lock:
                listeners = list(_notice_listeners)
            for fn in listeners:
                try:
                    fn(message)
                except Exception:  # a front end's printing problem must not end the wait
                    log.exception("busy-wait listener failed")
        time.sleep(min(0.05, 0.0005 * (2 ** min(prior_calls, 7))))
        return True


_handlers: weakref.WeakKeyDictionary[apsw.Connection, WaitTurn] = weakref.WeakKeyDictionary()


def wait_turn(conn: apsw.Connection, path: Path | str) -> None:
    """Make ``conn`` wait its turn on another process's lock (see BUSY_WAIT_S)."""
    handler = WaitTurn(path)
    conn.set_busy_handler(handler)
    _handlers[conn] = handler


def stop_waiting(conn: apsw.Connection) -> None:
    """Closing: a write of ``conn`` waiting for another process's lock gives up at its next poll (within 50 ms), so
    quitting or switching the database never waits out the long bound."""
    handler = _handlers.get(conn)
    if handler is not None:
        handler.abandoned = True


def vec_library_path() -> str:
    """Path of sqlite-vec's loadable library (``vec0.so``/``.dylib``/``.dll``), also inside a frozen bundle."""
    try:
        import sqlite_vec
    except ImportError as exc:  # pragma: no cover - packaging error
        raise StoreError("The sqlite-vec package is not installed; reinstall desktop-memory.") from exc
    path: str = sqlite_vec.loadable_path()
    return path


def _parse_version(text: str) -> tuple[int, ...]:
    digits = text.lstrip("v").split("-")[0]
    try:
        return tuple(int(p) for p in digits.split("."))
    except ValueError:
        return (0,)


def load_vec(conn: apsw.Connection) -> str:
    """Load sqlite-vec into ``conn`` and return its version, or raise StoreError saying why it failed."""
    path = vec_library_path()
    try:
        conn.enable_load_extension(True)
        conn.load_extension(path)
        conn.enable_load_extension(False)
        version = as_str(scalar(conn, "select vec_version()"))
    except apsw.Error as exc:
        raise StoreError(f"Cannot load the sqlite-vec extension from {path}: {exc}") from exc
    if _parse_version(version) < MIN_VEC_VERSION:
        need = ".".join(map(str, MIN_VEC_VERSION))
        raise StoreError(f"sqlite-vec {version} is too old; desktop-memory needs {need} or newer.")
    return version


def _busy_handler_message(path: Path) -> str:
    return (f"The database {path} is busy (another desktop-memory kept it locked longer than this one waits). "
            "Try again in a moment.")


def open_connection(path: Path | str, *, readonly: bool = False) -> apsw.Connection:
    """Open (creating if needed) the database with sqlite-vec loaded and WAL on."""
    path = Path(path)
    if any("\ud800" <= ch <= "\udfff" for ch in str(path)):  # bytes the file-system encoding cannot decode
        shown = str(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise StoreError(f"The database path {shown} is not valid text (undecodable bytes); choose a plain name.")
    flags = apsw.SQLITE_OPEN_READONLY if readonly else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
    if not readonly and str(path) not in ("", ":memory:"):
        try:
            make_private_dirs(path.parent)
        except OSError as exc:
            raise StoreError(f"Cannot create the database folder {path.parent}: {exc.strerror}") from exc
        try:
            # An empty file is a new SQLite database: created 0600 here, SQLite then gives the -wal and -shm
            # files the database file's mode (unix VFS), so the whole memory is owner-only whatever the umask.
            create_private_file(path)
        except OSError:
            pass  # not creatable (read-only media, permissions): SQLite's open below says so, clearly
    try:
        try:
            conn = apsw.Connection(str(path), flags=flags)
            wait_turn(conn, path)
            conn.execute("pragma schema_version").fetchone()  # opens the file now: errors say what they are
        except apsw.CantOpenError:
            if not _on_read_only_media(path):
                raise
            # A WAL database on read-only media (a mount, a share) whose -shm file cannot be created: still
            # readable (see store/readonly.py); writes are then refused with a clear "read-only".
            conn = open_fallback(path, READ_ONLY)
            wait_turn(conn, path)
        except (apsw.IOError, apsw.FullError):
            if readonly or not path.is_file() or not disk_is_full(path):
                raise
            conn = open_fallback(path, DISK_FULL)  # reading needs no space: search works, writes say "disk full"
            wait_turn(conn, path)
        try:
            load_vec(conn)
            preflight(conn, path)  # a foreign, newer or damaged file is refused before anything is written
        except BaseException:
            conn.close()
            raise
        if not readonly and mode_of(conn) is None and conn.readonly("main"):
            mark(conn, READ_ONLY, f"The database {path} is open read-only because the file cannot be written: "
                                  "searching works; indexing and changes are off.")
        if not readonly and mode_of(conn) is None:
            mode = scalar(conn, "pragma journal_mode=wal")
            if str(mode).lower() != "wal" and os.access(path, os.W_OK):
                raise StoreError(f"Cannot switch {path} to WAL mode (got {mode}).")
        conn.execute("pragma synchronous=normal")
        conn.execute("pragma foreign_keys=on")
        conn.execute("pragma temp_store=memory")
        # Removed means gone: deleted rows are overwritten with zeros, not left in free space (FTS5's own
        # secure-delete option is persistent, set by a migration; see docs/PRIVACY.md for the measured cost).
        conn.execute("pragma secure_delete=on")
        # No memory-mapped I/O: mapped pages count as the app's memory (1 GB of RSS at 300k chunks) and the
        # dense lane never scans vec0 (it reads candidates by primary key), so the page cache below is
        # enough: hybrid p50 20 ms at 100k chunks and 36 ms at 300k, app peak RSS ~350-420 MB (docs/BENCHMARKS.md).
        conn.execute("pragma mmap_size=0")
        conn.execute("pragma cache_size=-65536")
    except apsw.BusyError as exc:
        raise StoreBusy(_busy_handler_message(path)) from exc
    except apsw.CantOpenError as exc:
        raise StoreError(f"Cannot open the database {path}: check the path and its permissions.") from exc
    except apsw.NotADBError as exc:
        raise NotOurDatabase(f"{path} is not a desktop-memory database (or it is corrupt).") from exc
    except apsw.ReadOnlyError as exc:
        raise StoreReadOnly(f"The database {path} is read-only; pick a writable location in Settings.") from exc
    return conn


def secure_store_files(db_path: Path) -> list[str]:
    """Make an opened desktop-memory database owner-only: the file, its -wal/-shm, migration backups, and the
    app's own data and config folders (with the logs and settings.toml in them). Returns one notice line when
    something had to be tightened (nothing to do, and no notice, the next time). Called only once the file is
    known to be ours: a foreign SQLite file is refused before this runs. A database in a folder the person
    chose keeps that folder's mode (it may be shared on purpose); only the files are made private."""
    changed = [n for n in (tighten(d, folder=True) for d in (data_dir(), config_dir())) if n]
    logs = data_dir() / "logs"
    if logs.is_dir():
        changed += tighten_all([logs, *sorted(p for p in logs.iterdir() if p.is_file())])
    files = [db_path, Path(f"{db_path}-wal"), Path(f"{db_path}-shm"), settings_path()]
    # migration backups by name (no listing of the folder: it may be one the person chose, ~/Documents)
    from .migrations import SCHEMA_VERSION

    backups = [db_path.with_name(f"{db_path.name}.bak-v{v}") for v in range(1, SCHEMA_VERSION)]
    changed += tighten_all(files + backups)
    return tightened_notice(changed)


def _on_read_only_media(path: Path) -> bool:
    """The database file exists on a file system mounted read-only."""
    return on_read_only_media(path)


def translate_error(exc: BaseException, path: Path | str) -> StoreError | None:
    """Map environment errors (busy, full, read-only, corrupt) to a StoreError a person can act on.

    The whole chain is looked at: when SQLite has already rolled a transaction back itself (it does on
    SQLITE_FULL, SQLITE_IOERR, ...), apsw's ``with conn:`` then fails with "cannot rollback - no transaction is
    active", and the real cause is that error's ``__context__``."""
    seen: set[int] = set()
    while isinstance(exc, apsw.Error) and id(exc) not in seen:
        seen.add(id(exc))
        found = _translate_one(exc, path)
        if found is not None:
            return found
        cause = exc.__cause__ or exc.__context__
        if cause is None:
            break
        exc = cause
    return None


def _translate_one(exc: BaseException, path: Path | str) -> StoreError | None:
    if isinstance(exc, apsw.BusyError):
        return StoreBusy(_busy_handler_message(Path(path)))
    if isinstance(exc, apsw.FullError):
        return StoreFull(
            f"The disk holding {path} is full; free some space and index again. Nothing committed was lost."
        )
    if isinstance(exc, apsw.ReadOnlyError):
        return StoreReadOnly(f"The database {path} is read-only; pick a writable location in Settings.")
    if isinstance(exc, (apsw.CorruptError, apsw.NotADBError)):
        return StoreDamaged(f"The database {path} is corrupt: {exc}. Move it aside and index again.",
                            advice="Move it aside and index again.")
    if isinstance(exc, apsw.IOError):
        return StoreError(f"I/O error on {path}: {exc}. Check the disk.")
    return None


def probe_busy(db_path: Path, wait_ms: int) -> None:
    """Raise StoreError("busy") at once when another process holds the database locked outright (waiting at most
    ``wait_ms``); any other problem is left for the real open to explain."""
    try:
        conn = apsw.Connection(str(db_path), flags=apsw.SQLITE_OPEN_READONLY)
    except apsw.Error:
        return  # the service's own open says what is wrong
    try:
        conn.setbusytimeout(wait_ms)
        conn.execute("select count(*) from sqlite_master").fetchone()
    except apsw.BusyError:
        raise StoreBusy(f"The database {db_path} is busy: another program holds it locked (the desktop-memory "
                         "app may be upgrading it). Try again in a moment.") from None
    except apsw.Error:
        pass
    finally:
        conn.close()
