"""Issue 30 item 3 in the Settings dialog's key row (gui/settings/servers.py): a key with a pasted zero-width space
is refused at Save with the position and kind of character, never shown back, and nothing is stored; a typed key
of the same kind used by Test connection is refused the same way before anything is sent."""

from __future__ import annotations

from desktop_memory.api_keys import get_key
from desktop_memory.config import EmbedderSettings
from desktop_memory.gui.settings.servers import ServerPanel
from desktop_memory.gui.tasks import TaskRunner


def test_a_pasted_key_with_an_invisible_character_is_refused_at_save(qtbot) -> None:  # type: ignore[no-untyped-def]
    runner = TaskRunner(max_threads=1, inline=True)
    es = EmbedderSettings(kind="openai", openai_url="http://127.0.0.1:9/v1", openai_model="m")
    panel = ServerPanel(runner, "embedder", lambda: es)
    qtbot.addWidget(panel)
    qtbot.waitUntil(lambda: panel.key.status.text() == "Key: not set", timeout=10000)
    panel.key.field.setText("sk-gui\u200bkey-5150")
    panel.key.save_btn.click()
    qtbot.waitUntil(lambda: panel.key.status.text().startswith("✗"), timeout=10000)
    status = panel.key.status.text()
    assert "character 7 of 15" in status and "U+200B" in status and "5150" not in status
    assert get_key("embedder") == ""
    panel.key.field.setText("sk-gui\u200bkey-5150")  # typed, not saved: Test connection uses it
    panel.tester.test_btn.click()
    qtbot.waitUntil(lambda: panel.tester.result.text().startswith("✗"), timeout=20000)
    result = panel.tester.result.text()
    assert "cannot be used: character 7 of 15" in result and "5150" not in result
    runner.wait(20000)
