"""How the window names another machine's files in a shared library (docs/SHARED.md): a result or a Library folder
from the laptop reads "laptop: plan.md", and Open or Reveal on it says in one sentence why it cannot open here.
Qt-free; the machines come from the service (``other_machines``: library folder → machine name)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..machines_view import is_inside
from ..models import SearchResult


def result_name(r: SearchResult) -> str:
    """The file name a result row shows, with its machine when that is another one."""
    name = os.path.basename(r.source)
    return f"{r.machine}: {name}" if r.remote else name


def machine_of(path: str, machines: Mapping[str, str]) -> str | None:
    """The other machine whose library folder holds ``path``, or None (this machine's, or not known)."""
    found = [folder for folder in machines if is_inside(path, folder)]
    return machines[max(found, key=len)] if found else None


def not_here(path: str, machine: str) -> str:
    """Why a file of another machine does not open here, in one sentence."""
    name = os.path.basename(path.rstrip("/\\")) or path
    return (f"{name} is on {machine}: open it there — this computer searches the shared library but cannot reach "
            f"{machine}'s files.")
