"""Frozen entry point of the `desktop-memory` CLI executable (PyInstaller bundle).

The installed console script is ``desktop_memory.cli:main``; this file is that, for the bundle.
``desktop_memory.cli.main`` calls ``multiprocessing.freeze_support()`` first thing, so the frozen executable can
also serve as the PDF extraction worker (multiprocessing spawn/forkserver children re-run this executable).
"""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()  # a spawned worker must stop here, before argument parsing
    from desktop_memory.cli import main

    sys.exit(main())
