"""Real file systems for the faults a disk can have: a small tmpfs (full disk), remounted read-only. Only as root
(CAP_SYS_ADMIN); elsewhere the fixtures yield None and the tests that need them say so."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True, check=False).returncode == 0


@contextlib.contextmanager
def mounted_tmpfs(where: Path, size: str) -> Iterator[Path | None]:
    """A tmpfs of ``size`` at ``where`` (None when this machine cannot mount: not root / no CAP_SYS_ADMIN)."""
    where.mkdir(parents=True, exist_ok=True)
    if not IS_ROOT or not _mount("-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where)):
        yield None
        return
    try:
        yield where
    finally:
        for _ in range(20):
            if subprocess.run(["umount", str(where)], capture_output=True, check=False).returncode == 0:
                break
            time.sleep(0.25)
        else:
            subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)


def remount_ro(where: Path) -> bool:
    return _mount("-o", "remount,ro", str(where))
