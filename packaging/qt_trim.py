"""Which collected Qt files the bundle keeps: shared by the Qt hook overrides (packaging/hooks/) and the spec.

PyInstaller's PySide6 hooks collect every plugin of each plugin type QtGui can use (embedded-Linux platforms,
EGL device integrations, the GTK theme, the PDF image format that pulls in QtPdf...) and all Qt translations.
Filtering in the hooks, before PyInstaller follows the plugins' library dependencies, keeps those dependencies
(QtPdf, EGL/KMS libraries, GTK's cairo/gio/...) out of the bundle as well.
"""

from __future__ import annotations

import re

# Relative to PySide6/Qt/. Keep = the desktop platforms, plus offscreen/minimal (headless runs and --smoke).
_KEEP = {
    "plugins/platforms": re.compile(r"q(xcb|wayland|cocoa|windows|offscreen|minimal)\b"),
    "plugins/imageformats": re.compile(r"q(svg|ico|jpeg|gif)\b"),  # SVG icon; PNG is built into QtGui
    "plugins/iconengines": re.compile(r"qsvgicon\b"),
    "plugins/platformthemes": re.compile(r"q(xdgdesktopportal|windows|cocoa|mac)"),  # not gtk3: needs system GTK
    "plugins/platforminputcontexts": re.compile(r"(compose|ibus)"),
    "plugins/xcbglintegrations": re.compile(r"qxcb-(glx|egl)-integration\b"),
    "plugins/wayland-shell-integration": re.compile(r"xdg-shell\b"),  # what desktop compositors speak
    "plugins/wayland-decoration-client": re.compile(r"."),
    # none: QtWidgets draws into shared-memory buffers; the EGL client integration (for OpenGL/Quick) needs QtOpenGL
    "plugins/wayland-graphics-integration-client": re.compile(r"(?!)"),
    "plugins/styles": re.compile(r"."),
}
# Whole directories never needed: translations (the app ships none, Qt's alone would half-translate dialogs),
# embedded-Linux input/EGL plugins, and plugin types of modules the app does not use.
_DROP_DIRS = (
    "translations", "qml", "plugins/egldeviceintegrations", "plugins/generic", "plugins/accessiblebridge",
    "plugins/wayland-graphics-integration-server", "plugins/sqldrivers", "plugins/qmltooling", "plugins/tls",
    "plugins/networkinformation", "plugins/multimedia", "plugins/position", "plugins/printsupport",
    "plugins/designer", "plugins/vectorimageformats",
)
# Qt libraries that only the dropped plugins (or unused modules) link to.
_DROP_LIBS = re.compile(
    r"Qt6(Pdf|Qml|Quick|VirtualKeyboard|WebEngine|WebChannel|WebSockets|OpenGL|Sql|Test|Designer|Help|"
    r"UiTools|Xml|Concurrent|Multimedia|Positioning|Location|3D|Charts|DataVisualization|Graphs|LabsStyleKit|"
    r"SerialPort|Sensors|StateMachine|TextToSpeech|Bluetooth|Nfc|Scxml|RemoteObjects|HttpServer|SpatialAudio|"
    r"ShaderTools|EglFSDeviceIntegration|EglFsKmsSupport|EglFsKmsGbmSupport|PrintSupport)"
)


def qt_relpath(path: str) -> str | None:
    """'.../PySide6/Qt/plugins/platforms/libqxcb.so' -> 'plugins/platforms/libqxcb.so'; None if not under Qt/."""
    p = path.replace("\\", "/")
    marker = "PySide6/Qt/"
    i = p.find(marker)
    return p[i + len(marker):] if i >= 0 else None


def drop_reason(path: str) -> str | None:
    """Why this Qt file (a source path or a bundle destination) is left out; None keeps it."""
    rel = qt_relpath(path)
    if rel is None:
        return None
    for d in _DROP_DIRS:
        if rel == d or rel.startswith(d + "/"):
            return f"unused Qt part ({d})"
    folder, _, name = rel.rpartition("/")
    keep = _KEEP.get(folder)
    if keep is not None and not keep.search(name):
        return f"unused Qt plugin ({folder})"
    if folder in ("lib", "") and _DROP_LIBS.search(name):
        return "unused Qt library"
    return None


def filter_hook_toc(entries):
    """Filter a hook's (source, dest_dir) list (sources are the files under site-packages/PySide6/Qt/)."""
    return [e for e in entries if drop_reason(e[0]) is None]
