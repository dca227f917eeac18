"""Which machine this is, for a library shared by several (docs/SHARED.md).

Each library folder belongs to the machine that added it: only that machine reads, catches up and watches it,
and the others name its results ("desktop: notes/plan.md"). A machine is a random id kept in the config folder
(``machine-id``, owner-only, made once; two config folders are two machines) and a readable name: the
``machine_name`` setting, else the host name. The id, not the name, decides ownership, so renaming a machine
changes how it is shown, never what it watches.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import uuid
from pathlib import Path

from .config import Settings, config_dir
from .private_files import make_private_dirs, open_private

MACHINE_ID_FILE = "machine-id"
log = logging.getLogger(__name__)


def machine_id_path() -> Path:
    return config_dir() / MACHINE_ID_FILE


def machine_id() -> str:
    """This machine's id: read from the config folder, or made there once (atomically: two processes starting at
    the same moment agree). A file that does not hold an id is left untouched (it is not ours to rewrite) and a
    stable id derived from the host name is used instead, as when the config folder cannot be written."""
    path = machine_id_path()
    found = _read(path)
    if found is not None:
        return found
    if not path.exists():
        made = _create(path)
        if made is not None:
            return made
    fallback = str(uuid.uuid5(uuid.NAMESPACE_DNS, f"desktop-memory.{socket.gethostname()}"))
    log.warning("%s does not hold a machine id; using %s, derived from the host name", path, fallback)
    return fallback


def _read(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8").strip()
        return str(uuid.UUID(text))
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def _create(path: Path) -> str | None:
    """Write a new id beside ``path`` and link it into place (no-clobber); the id that won, or None."""
    new = str(uuid.uuid4())
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{new[:8]}")
    try:
        make_private_dirs(path.parent)
        with open_private(tmp, "w", encoding="utf-8") as f:
            f.write(new + "\n")
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process was first: its id is this machine's
    except OSError:
        log.warning("could not keep a machine id in %s", path.parent, exc_info=True)
        return None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    return _read(path)


def machine_name(settings: Settings) -> str:
    """How this machine is named on the others' screens: the ``machine_name`` setting, else the host name."""
    return settings.machine_name.strip() or socket.gethostname().split(".")[0] or "this machine"


def this_machine(settings: Settings) -> tuple[str, str]:
    """(id, readable name) of this machine."""
    return machine_id(), machine_name(settings)
