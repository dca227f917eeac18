"""Help → About: what is running and where the data lives (version, database, model, counts)."""

from __future__ import annotations

import html
import platform

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt, qVersion
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from .. import __version__
from ..config import Settings, settings_path
from ..models import STATUS_INDEXED, Stats
from .formatting import counted, human_bytes


def about_rows(settings: Settings, stats: Stats | None, model_id: str) -> list[tuple[str, str]]:
    """(label, value) rows of the About box; Qt-free so tests can read them."""
    rows = [("Version", __version__)]
    rows.append(("Database", (stats.db_path if stats is not None else "") or str(settings.resolved_db_path())))
    if stats is not None:
        docs = stats.documents.get(STATUS_INDEXED, 0)
        rows.append(("Library", f"{counted(docs, 'document')} · {counted(stats.chunks, 'chunk')} · "
                                f"{human_bytes(stats.db_bytes)}"))
    model = model_id or (stats.model_id if stats is not None else None) or ""
    kind = {"ollama": "Ollama", "openai": "OpenAI-compatible server"}.get(settings.embedder.kind, "local")
    rows.append(("Embedding model", f"{model} ({kind})" if model else f"not loaded ({kind})"))
    rows.append(("Settings", str(settings_path())))
    rows.append(("Runtime", f"Python {platform.python_version()} · Qt {qVersion()} · PySide6 {pyside_version}"))
    return rows


class AboutDialog(QDialog):
    def __init__(self, settings: Settings, stats: Stats | None, model_id: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About Desktop Memory")
        self.setMinimumWidth(520)  # paths on one line where they fit
        self.rows = about_rows(settings, stats, model_id)
        lay = QVBoxLayout(self)
        head = QLabel("<h3>Desktop Memory</h3><p>Search your own files and paste the right passages into a "
                      "chat. Everything stays on this computer.</p>")
        head.setWordWrap(True)
        lay.addWidget(head)
        table = "".join(f"<tr><td><b>{html.escape(k)}</b>&nbsp;&nbsp;</td><td>{html.escape(v)}</td></tr>"
                        for k, v in self.rows)
        body = QLabel(f"<table>{table}</table>")
        body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse
                                     | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        body.setWordWrap(True)
        lay.addWidget(body)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        buttons.accepted.connect(self.accept)
        lay.addWidget(buttons)
