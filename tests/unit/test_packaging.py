"""Rules the PyInstaller build uses to keep the bundle lean (packaging/qt_trim.py) and the spec's metadata."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]


def _qt_trim():
    spec = importlib.util.spec_from_file_location("qt_trim", ROOT / "packaging" / "qt_trim.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_qt_trim_keeps_what_the_app_needs():
    t = _qt_trim()
    sp = "/venv/lib/python3.11/site-packages/PySide6/Qt/"
    for keep in ("lib/libQt6Core.so.6", "lib/libQt6Gui.so.6", "lib/libQt6Widgets.so.6", "lib/libQt6Svg.so.6",
                 "lib/libicudata.so.73", "plugins/platforms/libqxcb.so", "plugins/platforms/libqwayland.so",
                 "plugins/platforms/libqoffscreen.so", "plugins/platforms/qwindows.dll",
                 "plugins/platforms/libqcocoa.dylib", "plugins/imageformats/libqsvg.so",
                 "plugins/iconengines/libqsvgicon.so", "plugins/platformthemes/libqxdgdesktopportal.so",
                 "plugins/wayland-shell-integration/libxdg-shell.so", "plugins/xcbglintegrations/libqxcb-glx-integration.so"):
        assert t.drop_reason(sp + keep) is None, keep
    assert t.drop_reason("/site-packages/numpy/_core/x.so") is None  # only Qt files are judged


def test_qt_trim_drops_unused_qt_parts():
    t = _qt_trim()
    sp = "PySide6/Qt/"
    for drop in ("translations/qtbase_de.qm", "plugins/platforms/libqeglfs.so", "plugins/platforms/libqvnc.so",
                 "plugins/platforms/libqlinuxfb.so", "plugins/imageformats/libqpdf.so",
                 "plugins/imageformats/libqwebp.so", "plugins/platformthemes/libqgtk3.so",
                 "plugins/egldeviceintegrations/libqeglfs-kms-integration.so", "plugins/generic/libqevdevmouseplugin.so",
                 "plugins/wayland-graphics-integration-client/libqt-plugin-wayland-egl.so",
                 "lib/libQt6Pdf.so.6", "lib/libQt6Qml.so.6", "lib/libQt6Quick.so.6",
                 "lib/libQt6WebEngineCore.so.6", "lib/libQt6OpenGL.so.6", "qml/QtQuick/qmldir"):
        assert t.drop_reason(sp + drop), drop
    # kept: QtNetwork carries the single-instance QLocalServer (gui/instance_server.py)
    assert t.drop_reason(sp + "lib/libQt6Network.so.6") is None


def test_spec_reads_names_that_match_the_package():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    from desktop_memory import APP_NAME, __version__

    assert project["name"] == APP_NAME
    assert project["version"] == __version__  # the spec refuses to build when these disagree
    assert project["scripts"].get(APP_NAME) == "desktop_memory.cli:main"
    assert project["gui-scripts"].get(f"{APP_NAME}-gui") == "desktop_memory.gui.app:main"
