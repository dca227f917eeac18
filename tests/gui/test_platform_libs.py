"""Issue 33, "a newcomer's first ten minutes" §1: on Linux, before Qt starts, the system libraries of Qt's xcb
platform plugin are checked; the missing ones are named with the command that installs them (exit 69), instead of
Qt's abort (exit 134) naming a library that is installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_memory.gui import platform_libs
from desktop_memory.gui.platform_libs import EXIT_MISSING_LIBS, LIBS, uses_xcb

REPO = Path(__file__).resolve().parents[2]
# what every Linux has, or PySide6 brings itself: not worth a line in an install command
BASE = {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libz.so.1", "libdl.so.2", "libpthread.so.0",
        "ld-linux-x86-64.so.2", "libzstd.so.1"}


def _needed(path: Path) -> set[str]:
    out = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=True).stdout
    return {line.split("[", 1)[1].split("]", 1)[0] for line in out.splitlines() if "(NEEDED)" in line}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the xcb plugin is Linux's")
def test_the_list_covers_every_system_library_the_installed_qt_links():
    assert shutil.which("readelf"), "binutils' readelf reads the plugin's NEEDED entries (.ci/run installs it)"
    import PySide6

    qt = Path(PySide6.__file__).parent / "Qt"
    bundled = {p.name for p in (qt / "lib").iterdir()}
    needed: set[str] = set()
    for lib in (qt / "plugins" / "platforms" / "libqxcb.so", qt / "lib" / "libQt6XcbQpa.so.6",
                qt / "lib" / "libQt6Gui.so.6", qt / "lib" / "libQt6DBus.so.6"):
        needed |= _needed(lib)
    system = {n for n in needed if n not in bundled and n not in BASE and not n.startswith("libicu")}
    assert system - {lib.soname for lib in LIBS} == set()


def test_only_where_qt_takes_its_xcb_plugin():
    assert uses_xcb({}, "linux") and uses_xcb({"QT_QPA_PLATFORM": "xcb"}, "linux")
    assert not uses_xcb({"QT_QPA_PLATFORM": "offscreen"}, "linux")
    assert not uses_xcb({"QT_QPA_PLATFORM": "wayland"}, "linux")
    assert not uses_xcb({"WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland"}, "linux")
    assert uses_xcb({"WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "x11"}, "linux")
    assert not uses_xcb({}, "darwin") and not uses_xcb({}, "win32")


def test_nothing_missing_on_this_machine_lets_qt_start():
    assert platform_libs.check_platform_libs({"QT_QPA_PLATFORM": "xcb"}) is None


GONE = ("libxcb-icccm.so.4", "libxcb-keysyms.so.1")
HIDE = f"""
import ctypes, sys
real = ctypes.CDLL
class Hidden(real):
    def __init__(self, name, *a, **k):
        if name in {GONE!r}:
            raise OSError(name + ": cannot open shared object file: No such file or directory")
        super().__init__(name, *a, **k)
ctypes.CDLL = Hidden
from desktop_memory.gui.app import main
code = main([])
assert "PySide6.QtGui" not in sys.modules, "Qt was loaded before the check"
sys.exit(code)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the xcb plugin is Linux's")
def test_missing_libraries_are_named_with_the_install_command_before_qt_aborts(tmp_path):
    """The Debian 12 walk: libxcb-icccm4 and libxcb-keysyms1 missing. The old start-up went on into Qt, which
    aborted (here: 134, no X server at :99) naming libxcb-cursor0."""
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    env.update(DISPLAY=":99", PYTHONPATH=str(REPO), DESKTOP_MEMORY_CONFIG_DIR=str(tmp_path / "c"),
               DESKTOP_MEMORY_DATA_DIR=str(tmp_path / "d"), XDG_RUNTIME_DIR=str(tmp_path / "run"))
    (tmp_path / "run").mkdir(mode=0o700)
    proc = subprocess.run([sys.executable, "-c", HIDE], capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=120, check=False)
    assert proc.returncode == EXIT_MISSING_LIBS, (proc.returncode, proc.stderr)
    assert "2 system libraries are missing (libxcb-icccm.so.4, libxcb-keysyms.so.1)" in proc.stderr
    assert "sudo apt install libxcb-icccm4 libxcb-keysyms1" in proc.stderr
    assert "sudo dnf install xcb-util-wm xcb-util-keysyms" in proc.stderr
    assert "libxcb-cursor0" not in proc.stderr and "Traceback" not in proc.stderr
