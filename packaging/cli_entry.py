"""Frozen entry point of the `desktop-memory` CLI executable (PyInstaller bundle).

The installed console script is ``desktop_memory.cli:main``; this file is that, for the bundle.
``desktop_memory.cli.main`` calls ``multiprocessing.freeze_support()`` first thing, so the frozen executable can
also serve as the PDF extraction worker (multiprocessing spawn/forkserver children re-run this executable).
"""

import multiprocessing
import os
import sys


def _trace_imports() -> None:
    """DESKTOP_MEMORY_IMPORT_TRACE=DIR (set by ci_bundle_check.sh's DM_LOAD_TRACE): at exit, write the modules this
    process imported to DIR/modules.<pid>, so packaging/load_trace.py can tell what the bundle carries unused."""
    folder = os.environ.get("DESKTOP_MEMORY_IMPORT_TRACE")
    if not folder:
        return
    import atexit

    def dump() -> None:
        with open(os.path.join(folder, f"modules.{os.getpid()}"), "w", encoding="utf-8") as f:
            f.write("\n".join(sorted(sys.modules)) + "\n")

    atexit.register(dump)


if __name__ == "__main__":
    _trace_imports()
    multiprocessing.freeze_support()  # a spawned worker must stop here, before argument parsing
    from desktop_memory.cli import main

    sys.exit(main())
