"""The Settings dialog, generated from the settings schema: one page per section (settings_schema.pages()).

Values are checked as they are typed with the settings file's own validation (config.settings_problems, which is
validate_settings run until every problem is found) and each problem is shown under its field; OK with a problem
left goes to it instead of closing. Nothing is clamped or rewritten: what the file holds is what the editors show
and give back. The dialog edits a copy; the main window applies the result (persisting it, switching the embedder in
the background and offering to re-embed when the model changed).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import msgspec
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QListWidget,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from ...config import EmbedderSettings, Settings, default_db_path
from ...errors import SettingsError
from ...library_location import ENV_DB, env_location, shown
from ...model_servers import ModelServers
from ...settings_file import settings_problems, validate_settings
from ...settings_schema import pages
from ..tasks import TaskRunner
from .editors import ComboTextEditor, FieldEditor, TextEditor
from .ollama import OllamaTester
from .page import SettingsPage
from .servers import ServerRows

OVERRIDES: dict[str, type[FieldEditor]] = {"embedder.ollama_model": ComboTextEditor}
CHECK_DELAY_MS = 150


class SettingsDialog(QDialog):
    def __init__(self, settings: Settings, runner: TaskRunner, parent: QWidget | None = None,
                 servers: ModelServers | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self._orig = settings
        self._runner = runner
        self._servers = servers or ModelServers()  # the service's probes (MemoryApi.servers); none without one
        self.ollama: OllamaTester | None = None
        # OpenAI-compatible embedder and reranker rows (servers.py)
        self.servers = ServerRows(runner, self.data, self._servers)
        self.page_list = QListWidget()
        self.page_list.setObjectName("SettingsPages")
        self.stack = QStackedWidget()
        self.pages: list[SettingsPage] = []
        self.editors: dict[str, FieldEditor] = {}
        for spec in pages():
            page = SettingsPage(spec, {**OVERRIDES, **ServerRows.overrides()},
                                {"embedder.ollama_model": self._ollama_row, **self.servers.rows()})
            self.pages.append(page)
            self.editors.update(page.editors)
            self.stack.addWidget(page)
            self.page_list.addItem(spec.title)
            page.changed.connect(self._schedule_check)
        self.servers.wire(self.editors)
        self.page_list.setFixedWidth(self.page_list.sizeHintForColumn(0) + 36)
        self.page_list.currentRowChanged.connect(self.stack.setCurrentIndex)
        body = QHBoxLayout()
        body.addWidget(self.page_list)
        body.addWidget(self.stack, 1)
        lay = QVBoxLayout(self)
        lay.addLayout(body, 1)
        Std = QDialogButtonBox.StandardButton
        self.buttons = QDialogButtonBox(Std.Ok | Std.Cancel | Std.RestoreDefaults)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        restore = self.restore_btn
        restore.setToolTip("Every setting on every page back to its default (the library's location stays).")
        restore.clicked.connect(self.restore_defaults)
        lay.addWidget(self.buttons)
        self._timer = QTimer(self, singleShot=True, interval=CHECK_DELAY_MS)
        self._timer.timeout.connect(self.check)
        self.load(settings)
        self._show_database(settings)
        self.page_list.setCurrentRow(0)
        self.resize(780, 540)

    def _show_database(self, settings: Settings) -> None:
        """An empty "Database file" means the default location: the empty field says which file that is (and
        whether it is the library open now)."""
        db = self.editors.get("db_path")
        if isinstance(db, TextEditor):
            try:  # (a shared library, or DESKTOP_MEMORY_DB, is the library instead of the default file)
                now = " (open now)" if settings.resolved_db_location() == default_db_path() else ""
            except ValueError:
                now = ""
            db.edit.setPlaceholderText(f"Default{now}: {default_db_path()}")
        url = self.editors.get("db_url")
        if isinstance(url, TextEditor):
            url.edit.setCursorPosition(0)  # a long URL shows its start: the scheme, user and server
            try:
                env = env_location()
            except ValueError:
                env = None
            if isinstance(env, str):  # the environment names the shared library open now (without its password)
                url.edit.setPlaceholderText(f"{ENV_DB} (open now): {shown(env)}")

    @property
    def restore_btn(self) -> QPushButton:
        return self.buttons.button(QDialogButtonBox.StandardButton.RestoreDefaults)

    def _ollama_row(self, page: SettingsPage) -> QWidget:
        models = page.editors["embedder.ollama_model"]
        assert isinstance(models, ComboTextEditor)
        self.ollama = OllamaTester(self._runner, self._servers.test_ollama, self._embedder_for_test, models, page)
        return self.ollama

    def _embedder_for_test(self) -> EmbedderSettings | str:
        data = self.data().get("embedder", {})
        try:
            return dataclasses.replace(msgspec.convert(data, EmbedderSettings), kind="ollama")
        except msgspec.ValidationError:
            return "Fix the Embedder settings marked in red first."

    def show_page(self, key: str) -> None:
        """Bring a section's page to the front ("embedder"; "" for the Library page)."""
        self.page_list.setCurrentRow(next(i for i, p in enumerate(self.pages) if p.spec.key == key))

    # -- what the editors hold ------------------------------------------------------------------------------
    def editor(self, name: str) -> FieldEditor:
        """The editor of a field by its dotted name ("search.top_k", "db_path")."""
        return self.editors[name]

    def load(self, settings: Settings) -> None:
        for page in self.pages:
            page.load(settings)
        self.check()

    def data(self) -> dict[str, Any]:
        """The settings as a dict: the original's, with every editor's value in its place (hidden fields and the
        window's own state kept as they were)."""
        data = self._orig.to_dict()
        for ed in self.editors.values():
            *sections, key = ed.spec.keys
            target = data
            for s in sections:
                target = target[s]
            target[key] = ed.value()
        return data

    def problems(self) -> list[SettingsError]:
        return settings_problems(self.data(), self._orig)

    def result_settings(self) -> Settings:
        """A new Settings object with the dialog's values (the original is untouched); SettingsError if a value
        is not valid (the same check the settings file gets)."""
        return validate_settings(self.data())

    # -- checking -------------------------------------------------------------------------------------------
    def _schedule_check(self) -> None:
        self._timer.start()

    def check(self) -> bool:
        """Show every problem under its field and mark its page; True when there is none."""
        found = self.problems()
        by_field = {".".join(p.keys): self.in_labels(p) for p in found}
        unplaced = [self.in_labels(p) for p in found if ".".join(p.keys) not in self.editors]
        for i, page in enumerate(self.pages):
            n = page.show_problems(by_field)
            item = self.page_list.item(i)
            item.setText(page.spec.title + ("  ⚠" if n else ""))
            item.setToolTip(f"{n} setting(s) to fix on this page" if n else "")
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setToolTip(
            "; ".join(unplaced) if unplaced else "")
        return not found

    def in_labels(self, problem: SettingsError) -> str:
        """The problem as the person sees the fields: "Passage size (3000) must not be larger than Longest passage
        (hard limit) (1100)", not the file's keys ("target_chars", "max_chars"); a key of the problem's own section
        first (two sections may share a key name)."""
        section = tuple(problem.keys[:-1])
        names: dict[str, str] = {}
        for ed in sorted(self.editors.values(), key=lambda e: tuple(e.spec.keys[:-1]) == section):
            names[ed.spec.keys[-1]] = ed.spec.title  # the own section's editors come last and win
        keys = sorted((k for k in names if "_" in k), key=len, reverse=True)  # file keys, not plain words
        if not keys:
            return problem.detail
        return re.sub(r"\b(" + "|".join(map(re.escape, keys)) + r")\b", lambda m: f"“{names[m.group(1)]}”",
                      problem.detail)

    def accept(self) -> None:
        self._timer.stop()
        if not self.check():
            self._go_to_first_problem()
            return
        super().accept()

    def _go_to_first_problem(self) -> None:
        for i, page in enumerate(self.pages):
            bad = next((ed for ed in page.editors.values() if ed.problem()), None)
            if bad is not None:
                self.page_list.setCurrentRow(i)
                page.ensureWidgetVisible(bad.widget)
                bad.input.setFocus(Qt.FocusReason.OtherFocusReason)
                return

    def restore_defaults(self) -> None:
        """Every field back to the schema's default, on every page; the database location is kept (restoring
        it would open another library on OK)."""
        db, url = self.editors.get("db_path"), self.editors.get("db_url")
        self.load(Settings(db_path=db.value() if db is not None else self._orig.db_path,
                           db_url=url.value() if url is not None else self._orig.db_url))
