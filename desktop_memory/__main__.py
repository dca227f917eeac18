"""``python -m desktop_memory`` starts the desktop app.

``freeze_support()`` comes first: PDFs are extracted in a child process, and in a frozen (PyInstaller) build on
Windows/macOS that child re-runs this entry point; freeze_support() turns it into the worker instead of a second
window.
"""

import multiprocessing
import sys


def _main() -> int:
    multiprocessing.freeze_support()
    from desktop_memory.gui.app import main

    return main()


if __name__ == "__main__":
    sys.exit(_main())
