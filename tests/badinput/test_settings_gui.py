"""The window's start-up with a broken settings file: the real dialog, its buttons, the dated backup."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from desktop_memory.config import Settings
from desktop_memory.errors import SettingsError
from desktop_memory.gui import desktop
from desktop_memory.gui.settings_problem import OPEN, QUIT, RESET, RETRY, SettingsProblemDialog, load_settings_or_ask


def _broken(tmp_path: Path) -> Path:
    p = tmp_path / "settings.toml"
    p.write_text('db_path = "/data/mine.db"\n[chunking]\ntarget_chars = 0\n', encoding="utf-8")
    return p


def test_dialog_shows_problem_and_reset_keeps_backup(qtbot, tmp_path: Path) -> None:
    p = _broken(tmp_path)
    seen: list[str] = []

    def click_reset() -> None:
        dlg = next(w for w in QApplication.topLevelWidgets() if isinstance(w, SettingsProblemDialog) and w.isVisible())
        seen.append(dlg.text())
        dlg.choice_buttons[RESET].click()

    QTimer.singleShot(200, click_reset)
    notes: list[str] = []
    settings = load_settings_or_ask(p, notify=notes.append)
    assert settings == Settings()
    assert "[chunking] target_chars" in seen[0] and "line 3" in seen[0]
    [backup] = tmp_path.glob("settings.toml.broken-*")
    assert "mine.db" in backup.read_text(encoding="utf-8") and not p.exists()
    assert str(backup) in notes[0]


def test_open_then_fix_then_retry(tmp_path: Path, monkeypatch) -> None:
    p = _broken(tmp_path)
    opened: list[str] = []
    monkeypatch.setattr(desktop, "open_path", lambda path: opened.append(path) or True)
    answers = iter([OPEN, RETRY, RETRY])
    errors: list[SettingsError] = []

    def ask(err: SettingsError) -> str:
        errors.append(err)
        choice = next(answers)
        if len(errors) == 2:  # the person fixed the file in the editor meanwhile
            p.write_text('db_path = "/data/mine.db"\n[chunking]\ntarget_chars = 700\n', encoding="utf-8")
        return choice

    settings = load_settings_or_ask(p, ask=ask)
    assert opened == [str(p)] and len(errors) == 2
    assert settings is not None and settings.db_path == "/data/mine.db" and settings.chunking.target_chars == 700


def test_quit_leaves_the_file_alone(tmp_path: Path) -> None:
    p = _broken(tmp_path)
    body = p.read_bytes()
    assert load_settings_or_ask(p, ask=lambda err: QUIT) is None
    assert p.read_bytes() == body and not list(tmp_path.glob("*.broken-*"))
