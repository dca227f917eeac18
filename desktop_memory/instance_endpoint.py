"""Where the running app's single-instance endpoint lives (gui/single_instance.py listens and hands off there).

Qt-free and without side effects on request, so `desktop-memory paths` can name the socket from the same code the
app uses: on POSIX a Unix socket in a folder only this user can reach (``XDG_RUNTIME_DIR`` when it is private, else
``$TMPDIR/desktop-memory-<uid>``), on Windows a named pipe. The name is derived from the config folder and the
database path, so a test or a second library (``--db``) gets its own instance.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
import tempfile
from pathlib import Path

from . import APP_NAME
from .config import config_dir

log = logging.getLogger("desktop_memory.gui.single_instance")


def endpoint(db_path: Path | str, *, create: bool = True) -> str | None:
    """The server name: an absolute socket path on POSIX, a pipe name on Windows; None when there is no folder
    only this user can reach (logged: the app then runs without single instance)."""
    key = f"{config_dir().resolve()}|{Path(db_path).expanduser().resolve()}"
    digest = hashlib.sha1(key.encode("utf-8")).hexdigest()[:12]
    name = f"{APP_NAME}-{digest}"
    if os.name == "nt":
        return name
    base = private_runtime_dir(create=create)
    return os.path.join(base, f"{name}.sock") if base else None


def private_runtime_dir(*, create: bool = True) -> str | None:
    """``XDG_RUNTIME_DIR`` when it is this user's own (owner = uid, no group/other bits), else the fallback
    ``$TMPDIR/desktop-memory-<uid>``: created atomically with mode 0700, or, when it exists, used only if it passes
    the same check and is not a symlink. Why: a folder another account made first (mode 777) would let it delete
    our socket, bind its own and read the next launch's request (the paths it names)."""
    xdg = os.environ.get("XDG_RUNTIME_DIR") or ""
    if xdg and os.path.isabs(xdg) and private_dir_problem(xdg, follow=True) is None:
        return xdg
    fallback = os.path.join(tempfile.gettempdir(), f"{APP_NAME}-{os.getuid()}")
    if not create and not os.path.lexists(fallback):
        return fallback  # where it would be made (`desktop-memory paths` only names it)
    try:
        os.mkdir(fallback, 0o700)  # atomic: either we made it (ours, 0700) or it was there and is checked below
    except FileExistsError:
        pass
    except OSError as exc:
        log.warning("single instance off: cannot create %s: %s", fallback, exc.strerror or exc)
        return None
    problem = private_dir_problem(fallback, follow=False)
    if problem:
        log.warning("single instance off: %s %s; remove it or set XDG_RUNTIME_DIR to a private folder", fallback,
                    problem)
        return None
    return fallback


def private_dir_problem(path: str, *, follow: bool) -> str | None:
    """Why ``path`` is not a folder only this user can reach, or None when it is."""
    try:
        st = os.stat(path) if follow else os.lstat(path)
    except OSError as exc:
        return f"cannot be checked ({exc.strerror or exc})"
    if stat.S_ISLNK(st.st_mode):
        return "is a symlink"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a folder"
    if st.st_uid != os.getuid():
        return f"belongs to another account (uid {st.st_uid})"
    if st.st_mode & 0o077:
        return f"is open to other accounts (mode {stat.S_IMODE(st.st_mode):o})"
    return None
