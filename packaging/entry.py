"""Frozen entry point of the Linux bundle's one executable: `desktop-memory` is the CLI, and `desktop-memory-gui`, a
symlink to it, the desktop app (chosen by the name it was started as).

One executable instead of two saves the second copy of the program's compressed Python archive (6.5 MB); each
name runs the same function as the installed console or gui script (``desktop_memory.cli:main``,
``desktop_memory.gui.app:main``). ``multiprocessing.freeze_support()`` runs first: the PDF helper process is this
executable re-launched by multiprocessing "spawn", and it must turn into the worker before any argument parsing or
Qt start-up. Windows and macOS keep two executables (packaging/cli_entry.py, gui_entry.py): a windowed GUI there
must be its own executable.
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


def _qt_runtime_hook() -> None:
    """PyInstaller's PySide6 run-time hook (``pyi_rth_pyside6``), run for the GUI only. As a run-time hook it would
    run at every start of the one executable, and it imports QtCore (to register the Qt prefix): +0.3 s and +13 MB
    for each CLI command, MCP server and PDF helper process. The spec takes it out of the executable's scripts."""
    from _pyi_rth_utils import qt as qt_rth_utils  # PyInstaller's helper, collected with the hook

    qt = os.path.join(sys._MEIPASS, "PySide6", "Qt")  # the bundle's _internal folder, set by the bootloader
    os.environ["QT_PLUGIN_PATH"] = os.path.join(qt, "plugins")
    os.environ["QML2_IMPORT_PATH"] = os.path.join(qt, "qml")
    qt_rth_utils.create_embedded_qt_conf("PySide6", qt)


if __name__ == "__main__":
    _trace_imports()
    multiprocessing.freeze_support()  # a spawned worker must stop here, before argument parsing
    if os.path.basename(sys.argv[0]).endswith("-gui"):
        _qt_runtime_hook()
        from desktop_memory.gui.app import main
    else:
        from desktop_memory.cli import main

    sys.exit(main())
