# Overrides PyInstaller's hook for PySide6.QtCore (user hooks take precedence): same collection, minus the Qt
# plugins/translations/libraries the app does not use (rules in packaging/qt_trim.py, see docs/PACKAGING.md).
import importlib.util
from pathlib import Path

from PyInstaller.utils.hooks.qt import add_qt6_dependencies

_spec = importlib.util.spec_from_file_location("_dm_qt_trim", Path(__file__).resolve().parents[1] / "qt_trim.py")
_trim = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_trim)

hiddenimports, binaries, datas = add_qt6_dependencies(__file__)
binaries = _trim.filter_hook_toc(binaries)
datas = _trim.filter_hook_toc(datas)
