"""Start-up with a settings file that does not load: say what is wrong, offer to open it or reset it.

Falling back to defaults silently would point the app at the default database (an empty library) and the next
save would overwrite the person's file, so the window does not open until the file loads or is reset. A reset
moves the broken file aside with a dated name (``settings.toml.broken-YYYYMMDD-HHMMSS``), it never deletes it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QMessageBox, QWidget

from ..config import Settings, settings_path
from ..errors import SettingsError
from ..settings_file import load_settings, reset_settings
from . import desktop

OPEN, RETRY, RESET, QUIT = "open", "retry", "reset", "quit"


class SettingsProblemDialog(QMessageBox):
    """The problem, where it is, and four ways on: open the file, try again, reset (with a backup), quit."""

    def __init__(self, error: SettingsError, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setIcon(QMessageBox.Icon.Warning)
        self.setWindowTitle("Desktop Memory: settings problem")
        where = f"{error.path}" + (f", line {error.line}" if error.line else "")
        self.setText(f"The settings file cannot be used:\n\n{error.problem}\n\n{where}")
        self.setInformativeText(
            "Open the file to fix it and press Try again, or reset to the defaults: the broken file is kept "
            "beside it as a dated backup. Nothing has been changed."
        )
        self.choice_buttons = {
            OPEN: self.addButton("Open the file", QMessageBox.ButtonRole.ActionRole),
            RETRY: self.addButton("Try again", QMessageBox.ButtonRole.AcceptRole),
            RESET: self.addButton("Reset to defaults", QMessageBox.ButtonRole.DestructiveRole),
            QUIT: self.addButton("Quit", QMessageBox.ButtonRole.RejectRole),
        }
        self.setDefaultButton(self.choice_buttons[RETRY])
        self.setEscapeButton(self.choice_buttons[QUIT])

    def choice(self) -> str:
        clicked = self.clickedButton()
        return next((name for name, b in self.choice_buttons.items() if b is clicked), QUIT)


def _ask(error: SettingsError) -> str:
    dlg = SettingsProblemDialog(error)
    dlg.exec()
    return dlg.choice()


def load_settings_or_ask(path: Path | None = None, ask: Callable[[SettingsError], str] = _ask,
                         notify: Callable[[str], None] | None = None) -> Settings | None:
    """Settings to start with, or None when the person chose to quit. ``ask`` shows the problem and returns
    one of OPEN/RETRY/RESET/QUIT (the dialog by default; tests pass their own)."""
    path = path or settings_path()
    while True:
        try:
            return load_settings(path)
        except SettingsError as exc:
            choice = ask(exc)
        if choice == OPEN:
            desktop.open_path(str(path))
        elif choice == RESET:
            backup = reset_settings(path)
            if notify is not None and backup is not None:
                notify(f"Settings were reset to the defaults; the broken file was kept as {backup}.")
            return Settings()
        elif choice == QUIT:
            return None
