"""Frozen entry point of the `desktop-memory-gui` executable (PyInstaller bundle).

The installed gui-script is ``desktop_memory.gui.app:main``; this file is that, for the bundle
(``desktop-memory-gui --smoke`` runs ``desktop_memory.gui.smoke.run_gui_smoke``, routed by ``app.main``).
``multiprocessing.freeze_support()`` runs before anything imports Qt: the PDF helper process is this executable
re-launched by multiprocessing "spawn", and it must turn into the worker without loading Qt.
"""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()
    from desktop_memory.gui.app import main

    sys.exit(main())
