"""Frozen entry point of the `desktop-memory-gui` executable (PyInstaller bundle).

The installed gui-script is ``desktop_memory.gui.app:main``; this file is that, for the bundle
(``desktop-memory-gui --smoke`` runs ``desktop_memory.gui.smoke.run_gui_smoke``, routed by ``app.main``).
``multiprocessing.freeze_support()`` runs before anything imports Qt: the PDF helper process is this executable
re-launched by multiprocessing "spawn", and it must turn into the worker without loading Qt.
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
    multiprocessing.freeze_support()
    from desktop_memory.gui.app import main

    sys.exit(main())
