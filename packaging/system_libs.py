"""System libraries the bundle takes from the desktop it runs on instead of carrying its own copy.

PyInstaller copies every shared library the bundled code links, system ones included. The libraries below are the
ones the AppImage project's long-standing exclude list (used by linuxdeployqt and appimage-builder) says must come
from the host: every desktop Linux has them, and they must match the session, not the build machine (fontconfig
with the system's font configuration, glib/gio with the system's GIO modules, libstdc++/libgcc_s at least as new as
any system library (a GL driver) loaded into the same process). Their companions from the same packages
(gmodule/gthread with glib, X11-xcb with X11) go with them, and so do libraries that only they link (glib's pcre2,
mount, blkid and selinux; freetype's png and brotli; X11's Xau/Xdmcp/bsd/md). The bundle needs glibc >= 2.36
anyway (docs/PACKAGING.md), so the host's libstdc++ is GCC 12's or newer, as new as the build machine's.
Second group (issue 26): what Qt's own PySide6 wheels on PyPI leave to the host. Those wheels ship Qt and ICU only;
libQt6DBus links the system's libdbus-1, libQt6Network its GSSAPI (Kerberos) library and libQt6Core libzstd, so
every machine that runs PySide6 from pip has them, and every desktop does (the session bus; Kerberos and zstd are
base libraries of every distribution's package manager). With them go the libraries only they link: systemd,
gcrypt, lz4 and libcap (libdbus-1's), krb5, k5crypto, krb5support and keyutils (GSSAPI's): 4.7 MB. The xcb helper
libraries and xkbcommon stay bundled although the wheels leave them to the host too: some desktops lack
`libxcb-cursor0` (Qt's most frequent "could not load the xcb platform plugin" report).
ci_bundle_check.sh runs `ldd` on every bundled ELF file: whatever one of them links must be in the bundle or on the
system.
"""

from __future__ import annotations

import re

_HOST = re.compile(
    r"^lib("
    r"stdc\+\+|gcc_s|z|uuid|com_err|expat|gpg-error|"  # the exclude list: C/C++ runtime and base libraries
    r"glib-2\.0|gio-2\.0|gobject-2\.0|gmodule-2\.0|gthread-2\.0|"  # glib (the exclude list names glib/gio/gobject)
    r"fontconfig|freetype|X11|X11-xcb|"  # fonts and X11 (the exclude list; X11-xcb is libX11's own package)
    r"pcre2-8|mount|blkid|selinux|png16|brotlidec|brotlicommon|Xau|Xdmcp|bsd|md|"  # linked only by the above
    r"dbus-1|gssapi_krb5|zstd|"  # what the PySide6 wheels themselves take from the host (QtDBus, QtNetwork, QtCore)
    r"systemd|gcrypt|lz4|cap|krb5|k5crypto|krb5support|keyutils"  # linked only by those
    r")\.so(\.\d+)*$"
)


def from_host(dest: str) -> bool:
    """Whether a collected binary (its bundle destination) is a system library the bundle leaves to the host."""
    name = dest.replace("\\", "/")
    return "/" not in name and bool(_HOST.match(name))
