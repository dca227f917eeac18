"""The Library's removal question: what it removes, named and counted, in a box wide enough for its title."""

from __future__ import annotations

import os

from PySide6.QtWidgets import QGridLayout, QMessageBox, QSizePolicy, QSpacerItem, QTreeView

from .library_model import LibraryModel


def _name(path: str) -> str:
    return f"“{os.path.basename(path.rstrip(os.sep)) or path}”"


def removal_what(tree: QTreeView, n: int) -> str:
    """What removing the selected rows takes: “notes.md”, the folder “papers” (5,183 files), 3 folders (“a”, “b”,
    “c”: 120 files), 2 items (“x.md”, “y”: 5 files)."""
    model = tree.model()
    assert isinstance(model, LibraryModel)
    rows = [model.node(idx) for idx in tree.selectionModel().selectedRows(0)]
    folders = [r for r in rows if r.doc is None]
    files = f"{n:,} file{'s' if n != 1 else ''}"
    if len(rows) == 1:
        return f"the folder {_name(rows[0].path)} ({files})" if folders else _name(rows[0].path)
    names = ", ".join(_name(r.path) for r in rows[:3])
    more = f" and {len(rows) - 3} more" if len(rows) > 3 else ""
    kind = "folders" if len(folders) == len(rows) else "items"
    return f"{len(rows)} {kind} ({names}{more}: {files})"


def wide_enough_for_title(box: QMessageBox) -> None:
    """A message box is as wide as its text: with a short question the window manager elides its title
    ("Remove from... top Memory"). A spacer under the text keeps room for the title and the app's name."""
    need = box.fontMetrics().horizontalAdvance(f"{box.windowTitle()} — Desktop Memory") + 160
    lay = box.layout()
    if isinstance(lay, QGridLayout):
        lay.addItem(QSpacerItem(need, 0, QSizePolicy.Policy.Minimum, QSizePolicy.Policy.Expanding),
                    lay.rowCount(), 0, 1, lay.columnCount())
