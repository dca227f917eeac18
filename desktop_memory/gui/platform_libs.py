"""Before Qt starts on Linux: are the system libraries of Qt's xcb platform plugin there?

Why: without one of them Qt aborts (exit 134) with "xcb-cursor0 or libxcb-cursor0 is needed to load the Qt xcb
platform plugin" even when libxcb-cursor0 is installed and the real gaps are others (a fresh Debian 12 lacks
libxcb-icccm4 and libxcb-keysyms1). Here each library the plugin and QtGui link is opened with the dynamic loader
(``ctypes.CDLL``, the same lookup Qt's own loading does), and the missing ones are named with the one command that
installs them, before anything of Qt is imported. No Qt import in this module.

Only where the xcb plugin will be used: Linux, ``QT_QPA_PLATFORM`` unset or ``xcb``, and not a Wayland session
(there Qt 6 picks its wayland plugin). The list comes from the NEEDED entries of PySide6's ``libqxcb.so``,
``libQt6XcbQpa.so.6``, ``libQt6Gui.so.6`` and ``libQt6DBus.so.6`` (6.11; tests/gui/test_platform_libs.py checks
that it still covers them), minus what every Linux has (libc, libstdc++, zlib, …).
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass

EXIT_MISSING_LIBS = 69  # sysexits' EX_UNAVAILABLE: something the program needs is not installed


@dataclass(frozen=True)
class Lib:
    soname: str
    debian: str  # verified with apt-cache on Debian 12 (package names are the same on Ubuntu)
    fedora: str  # not verified with dnf here: the names people install these with (see the README)
    arch: str  # likewise, not verified with pacman here


LIBS: tuple[Lib, ...] = (
    Lib("libxcb.so.1", "libxcb1", "libxcb", "libxcb"),
    Lib("libxcb-cursor.so.0", "libxcb-cursor0", "xcb-util-cursor", "xcb-util-cursor"),
    Lib("libxcb-icccm.so.4", "libxcb-icccm4", "xcb-util-wm", "xcb-util-wm"),
    Lib("libxcb-keysyms.so.1", "libxcb-keysyms1", "xcb-util-keysyms", "xcb-util-keysyms"),
    Lib("libxcb-image.so.0", "libxcb-image0", "xcb-util-image", "xcb-util-image"),
    Lib("libxcb-render-util.so.0", "libxcb-render-util0", "xcb-util-renderutil", "xcb-util-renderutil"),
    Lib("libxcb-util.so.1", "libxcb-util1", "xcb-util", "xcb-util"),
    Lib("libxcb-randr.so.0", "libxcb-randr0", "libxcb", "libxcb"),
    Lib("libxcb-render.so.0", "libxcb-render0", "libxcb", "libxcb"),
    Lib("libxcb-shape.so.0", "libxcb-shape0", "libxcb", "libxcb"),
    Lib("libxcb-shm.so.0", "libxcb-shm0", "libxcb", "libxcb"),
    Lib("libxcb-sync.so.1", "libxcb-sync1", "libxcb", "libxcb"),
    Lib("libxcb-xfixes.so.0", "libxcb-xfixes0", "libxcb", "libxcb"),
    Lib("libxcb-xkb.so.1", "libxcb-xkb1", "libxcb", "libxcb"),
    Lib("libxkbcommon.so.0", "libxkbcommon0", "libxkbcommon", "libxkbcommon"),
    Lib("libxkbcommon-x11.so.0", "libxkbcommon-x11-0", "libxkbcommon-x11", "libxkbcommon-x11"),
    Lib("libX11.so.6", "libx11-6", "libX11", "libx11"),
    Lib("libX11-xcb.so.1", "libx11-xcb1", "libX11-xcb", "libx11"),
    Lib("libGL.so.1", "libgl1", "libglvnd-glx", "libglvnd"),
    Lib("libEGL.so.1", "libegl1", "libglvnd-egl", "libglvnd"),
    Lib("libglib-2.0.so.0", "libglib2.0-0", "glib2", "glib2"),
    Lib("libgthread-2.0.so.0", "libglib2.0-0", "glib2", "glib2"),
    Lib("libfontconfig.so.1", "libfontconfig1", "fontconfig", "fontconfig"),
    Lib("libfreetype.so.6", "libfreetype6", "freetype", "freetype2"),
    Lib("libdbus-1.so.3", "libdbus-1-3", "dbus-libs", "dbus"),
)


def uses_xcb(environ: Mapping[str, str], platform: str = sys.platform) -> bool:
    """Will Qt load its xcb plugin? Linux only; an explicit ``QT_QPA_PLATFORM`` (offscreen, wayland, vnc) wins;
    unset in a Wayland session, Qt 6 takes wayland."""
    if not platform.startswith("linux"):
        return False
    chosen = environ.get("QT_QPA_PLATFORM", "").strip()
    if chosen:
        return chosen.split(":")[0].split(";")[0] == "xcb"
    return not (environ.get("WAYLAND_DISPLAY") and environ.get("XDG_SESSION_TYPE") == "wayland")


def _loads(soname: str) -> bool:
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def missing_libs(loads: Callable[[str], bool] = _loads) -> list[Lib]:
    return [lib for lib in LIBS if not loads(lib.soname)]


def install_lines(missing: list[Lib]) -> list[str]:
    def packages(attr: str) -> str:
        return " ".join(dict.fromkeys(getattr(lib, attr) for lib in missing))

    return [f"  sudo apt install {packages('debian')}      # Debian, Ubuntu",
            f"  sudo dnf install {packages('fedora')}      # Fedora",
            f"  sudo pacman -S {packages('arch')}      # Arch"]


def message(missing: list[Lib]) -> str:
    names = ", ".join(lib.soname for lib in missing)
    return "\n".join([
        f"desktop-memory-gui: Qt cannot open a window here: {len(missing)} system "
        f"librar{'y is' if len(missing) == 1 else 'ies are'} missing ({names}).",
        "Install them with the line for your system:",
        *install_lines(missing),
        "then start desktop-memory-gui again. The command line (desktop-memory) works without them.",
    ])


def check_platform_libs(environ: Mapping[str, str] | None = None,
                        loads: Callable[[str], bool] = _loads) -> int | None:
    """None when Qt can go ahead; else the message is on stderr and the exit code is returned."""
    if not uses_xcb(os.environ if environ is None else environ):
        return None
    missing = missing_libs(loads)
    if not missing:
        return None
    print(message(missing), file=sys.stderr)
    return EXIT_MISSING_LIBS
