"""Help → "Use in chat apps (MCP)…": the client configuration snippets with this installation's real paths.

The same snippets as the README (mcp_server/snippets.py), filled in with the command that starts this install's
MCP server and always the database the dialog names (``--db``): the chat app does not see this app's environment
(DESKTOP_MEMORY_DATA_DIR, a portable install), so "the default place" may be another library there. One tab per
client and a Copy button.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ..library_location import is_server_url
from ..mcp_server.snippets import installed_snippets


class McpDialog(QDialog):
    def __init__(self, db_path: Path | str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Use your memory in chat apps (MCP)")
        self.setObjectName("mcpDialog")
        self.resize(720, 520)
        self.db_path: Path | str = db_path if isinstance(db_path, str) and is_server_url(db_path) else Path(db_path)
        layout = QVBoxLayout(self)
        intro = QLabel(
            "Chat apps and coding agents that speak the Model Context Protocol (Claude Desktop, VS Code, Cursor, "
            "LM Studio, …) can search this library. Paste the snippet into the app's configuration and restart "
            "it. The server only reads: search, get_context, get_passage, list_sources.")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.allow_indexing = QCheckBox("Let the chat app re-index folders already in the library (adds index_path)")
        self.allow_indexing.toggled.connect(self._fill)
        layout.addWidget(self.allow_indexing)
        self.tabs = QTabWidget()
        layout.addWidget(self.tabs, 1)
        foot = QLabel(f"Library: {self.db_path}. Paths in results are relative to the indexed folder unless "
                      "Settings say otherwise.")
        foot.setWordWrap(True)
        foot.setObjectName("mcpFoot")
        layout.addWidget(foot)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.copy_button = QPushButton("&Copy")
        self.copy_button.setDefault(True)
        self.copy_button.clicked.connect(self.copy_current)
        buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self._fill()

    def _fill(self) -> None:
        current = max(0, self.tabs.currentIndex())
        self.tabs.clear()
        db = str(self.db_path)  # always: the snippet opens the library this dialog names, whatever the environment
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        for snip in installed_snippets(db, self.allow_indexing.isChecked()):
            page = QWidget()
            v = QVBoxLayout(page)
            where = QLabel(f"Paste into {snip.where}.")
            where.setWordWrap(True)
            v.addWidget(where)
            text = QPlainTextEdit(snip.text)
            text.setReadOnly(True)
            text.setFont(mono)
            text.setObjectName("mcpSnippet")
            v.addWidget(text, 1)
            self.tabs.addTab(page, snip.client)
        self.tabs.setCurrentIndex(min(current, self.tabs.count() - 1))
        self.copy_button.setText("&Copy")

    def current_text(self) -> str:
        page = self.tabs.currentWidget()
        edit = page.findChild(QPlainTextEdit) if page else None
        return edit.toPlainText() if edit else ""

    def copy_current(self) -> None:
        QGuiApplication.clipboard().setText(self.current_text())
        self.copy_button.setText("Copied ✓")
