"""What the screenshot scripts share: let the event loop run, wait for a condition, save a window as a PNG.

Imports Qt when called, not when imported: the scripts set the platform and config folders first.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def spin(ms: int) -> None:
    """Run the event loop for ``ms`` milliseconds (layouts, paints and queued signals happen)."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def wait(cond: Callable[[], Any], timeout_s: float = 120.0) -> bool:
    """Spin until ``cond()`` holds; False (and a note on stderr) after ``timeout_s``."""
    end = time.time() + timeout_s
    while time.time() < end:
        if cond():
            return True
        spin(30)
    print("  (timed out waiting)", file=sys.stderr)
    return False


class Shooter:
    """Saves ``NAME-WxH-THEME.png`` into ``out`` (made smaller with ``compress`` when given) and lists them."""

    def __init__(self, out: Path, compress: Callable[[Path], None] | None = None, settle_ms: int = 200) -> None:
        self.out, self.compress, self.settle_ms = out, compress, settle_ms
        self.saved: list[Path] = []

    def __call__(self, widget: Any, name: str, size: tuple[int, int], theme: str) -> None:
        spin(self.settle_ms)
        path = self.out / f"{name}-{size[0]}x{size[1]}-{theme}.png"
        widget.grab().save(str(path))
        if self.compress is not None:
            self.compress(path)
        self.saved.append(path)
        print(f"saved {path} ({path.stat().st_size // 1024} KB)")
