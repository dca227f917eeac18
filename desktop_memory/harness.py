"""Developer tools the app finds at run time instead of importing them.

The benchmark harness (``desktop_memory_bench``) registers itself in pyproject.toml under two entry-point groups:
``desktop-memory bench`` comes from :data:`CLI_COMMANDS`, ``desktop-memory-gui --soak-bench / --stall-bench`` from
:data:`GUI_BENCHMARKS`. The app never imports the harness by name, so an install without it (the standalone bundle)
finds nothing and says how to get it, and no import circle joins the product to its test harness.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

CLI_COMMANDS = "desktop_memory.cli_commands"  # name → add_parser(subparsers): registers a subcommand
GUI_BENCHMARKS = "desktop_memory.gui_benchmarks"  # name → main(argv) -> int

BENCH_INSTALL_HINT = ("The benchmark is a developer tool that is not installed with the app. Install it in the "
                      "folder of a source checkout with: pip install '.[bench]' (adds psutil and ir-measures).")
GUI_BENCH_MISSING = ("{flag} is a developer benchmark and is not part of the installed app. Run it from a source "
                     "checkout with the benchmark extra: pip install -e '.[bench]', then desktop-memory-gui {flag} "
                     "--help.")


def find(group: str, name: str) -> Callable[..., Any] | None:
    """The object registered as ``name`` in ``group``, or None when nothing installed provides it (or it cannot be
    imported here: the bundle carries the package metadata but not the harness)."""
    for ep in entry_points(group=group):
        if ep.name == name:
            try:
                found: Callable[..., Any] = ep.load()
            except ImportError:
                return None
            return found
    return None
