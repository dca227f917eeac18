"""Help → "Use in chat apps (MCP)…": the snippets with this installation's paths, one tab per client, Copy."""

from __future__ import annotations

import json

from PySide6.QtWidgets import QApplication, QLabel

from desktop_memory.config import Settings, default_db_path
from desktop_memory.gui.mcp_dialog import McpDialog
from desktop_memory.mcp_server.snippets import server_command


def test_dialog_shows_filled_in_snippets_and_copies_them(qtbot, tmp_path):
    db = tmp_path / "elsewhere" / "memory.db"
    dlg = McpDialog(db)
    qtbot.addWidget(dlg)
    dlg.show()
    assert [dlg.tabs.tabText(i) for i in range(dlg.tabs.count())] == ["Claude Desktop", "VS Code",
                                                                     "Other apps (mcpServers)"]
    command, prefix = server_command()
    claude = json.loads(dlg.current_text())["mcpServers"]["desktop-memory"]
    assert claude == {"command": command, "args": [*prefix, "mcp", "--db", str(db)]}
    dlg.tabs.setCurrentIndex(1)
    vscode = json.loads(dlg.current_text())["servers"]["desktop-memory"]
    assert vscode["type"] == "stdio" and vscode["command"] == command
    dlg.copy_button.click()
    assert QApplication.clipboard().text() == dlg.current_text()
    assert "Copied" in dlg.copy_button.text()
    dlg.allow_indexing.setChecked(True)
    assert dlg.tabs.currentIndex() == 1, "the chosen client stays selected"
    assert json.loads(dlg.current_text())["servers"]["desktop-memory"]["args"][-1] == "--allow-indexing"


def test_the_default_library_is_named_too(qtbot, monkeypatch, tmp_path):
    """The location may come from DESKTOP_MEMORY_DATA_DIR, which the chat app does not have: --db always."""
    monkeypatch.setenv("DESKTOP_MEMORY_DATA_DIR", str(tmp_path / "portable"))
    dlg = McpDialog(default_db_path())
    qtbot.addWidget(dlg)
    for i in range(dlg.tabs.count()):
        dlg.tabs.setCurrentIndex(i)
        text = dlg.current_text()
        assert "--db" in text and json.dumps(str(tmp_path / "portable" / "memory.db")) in text
    assert str(default_db_path()) in dlg.findChild(QLabel, "mcpFoot").text()


def test_help_menu_opens_it(qtbot, make_window, hash_factory, monkeypatch):
    shown = []
    monkeypatch.setattr(McpDialog, "exec", lambda self: shown.append(self.db_path) or 0)
    w = make_window(hash_factory, Settings())
    help_menu = next(a.menu() for a in w.menuBar().actions() if a.text() == "&Help")
    action = next(a for a in help_menu.actions() if "MCP" in a.text())
    action.trigger()
    assert shown == [w.settings.resolved_db_path()]
