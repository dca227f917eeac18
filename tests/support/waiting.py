"""The one polling wait of the suites outside Qt (GUI tests wait with qtbot): a bound, not a measured expectation."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(cond: Callable[[], T], timeout: float = 20.0, interval: float = 0.02, what: str = "condition") -> T:
    """Poll ``cond`` every ``interval`` seconds until it returns something true, and return that; fail naming
    ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)
