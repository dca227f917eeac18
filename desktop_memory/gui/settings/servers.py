"""Settings widgets for model servers: Test connection for an OpenAI-compatible embedder (the models it lists) and
for the reranker, the API key rows, and the query/document prefixes of known models filled in as a model is chosen.
The probes themselves are the service's (model_servers.ModelServers, handed out as ``MemoryApi.servers``): the
window never builds an embedder or a reranker.

Everything that touches the network or the key store runs on the task runner (a keyring may block on an unlock
prompt; a server may take seconds), never on the UI thread. A key is never put back in the field: the row shows
whether one is stored and where, and the field only takes a new one.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from typing import Any

import msgspec
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from ...api_keys import KeyName
from ...config import EmbedderSettings, SearchSettings
from ...model_servers import WARN, ModelServers, prefixes_to_fill
from ..tasks import TaskRunner
from .editors import ComboTextEditor, FieldEditor

# what a Test button runs on a worker: (status line, model names); or, instead of work, why it cannot run
ProbeJob = Callable[[], tuple[str, list[str]]]


def plain(exc: BaseException | str) -> str:
    """An error as one sentence for people: no backticks, no "[Errno 111]"."""
    text = re.sub(r"\[Errno -?\d+\]\s*", "", str(exc).replace("`", ""))
    return text.strip()


def bring_into_view(w: QWidget) -> None:
    """Scroll the page holding ``w`` so it shows (the answer of Test connection lands under the fold of the
    780×540 dialog otherwise); after the layout has made room for it."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QScrollArea

    def scroll() -> None:
        p = w.parentWidget()
        while p is not None and not isinstance(p, QScrollArea):
            p = p.parentWidget()
        if p is not None and w.isVisible():
            p.ensureWidgetVisible(w, 0, 8)

    QTimer.singleShot(0, w, scroll)  # with w as context: never after the dialog is gone


class ApiKeyRow(QWidget):
    """A password field with Save and Forget, and a line saying whether a key is stored and where (never the key)."""

    def __init__(self, runner: TaskRunner, name: KeyName, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._runner = runner
        self.name: KeyName = name
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        self.field = QLineEdit()
        self.field.setEchoMode(QLineEdit.EchoMode.Password)
        self.field.setPlaceholderText("API key (only if the server needs one)")
        self.field.setAccessibleName(f"{name} API key")
        self.field.setToolTip("Kept in the system keyring when there is one, else in an owner-only file beside the "
                              "settings; never in settings.toml, never in logs.")
        self.save_btn = QPushButton("Save key")
        self.forget_btn = QPushButton("Forget key")
        for w in (self.field, self.save_btn, self.forget_btn):
            row.addWidget(w, 1 if w is self.field else 0)
        lay.addLayout(row)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        lay.addWidget(self.status)
        self.save_btn.clicked.connect(self.save)
        self.forget_btn.clicked.connect(self.forget)
        self.field.returnPressed.connect(self.save)
        self.refresh()

    def typed_key(self) -> str:
        return self.field.text().strip()

    def _run(self, fn: Callable[[], str]) -> None:
        self._runner.submit(fn, name=f"{self.name}-key", channel=f"{self.name}-key",
                            on_done=lambda text: self.status.setText(str(text)),
                            on_error=lambda exc, _tb: self.status.setText(f"✗ {plain(exc)}"))

    def refresh(self) -> None:
        from ...api_keys import key_status

        self._run(lambda: f"Key: {key_status(self.name)}")

    def save(self) -> None:
        key = self.typed_key()
        if not key:
            self.status.setText("Type the key first (or Forget key to remove a stored one).")
            return
        self.field.clear()
        from ...api_keys import set_key

        self._run(lambda: f"Key saved in {set_key(self.name, key)}.")

    def forget(self) -> None:
        from ...api_keys import clear_key, key_status

        def work() -> str:
            clear_key(self.name)
            return f"Key forgotten. Key: {key_status(self.name)}"

        self.field.clear()
        self._run(work)


class ServerTester(QWidget):
    """A Test button and the answer in full under it; ``job()`` returns the work to run (or why it cannot run), and
    ``on_models`` receives the models the server lists."""

    def __init__(self, runner: TaskRunner, job: Callable[[], ProbeJob | str], *, channel: str,
                 tooltip: str, on_models: Callable[[list[str]], None] | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._runner = runner
        self._job = job
        self._channel = channel
        self._on_models = on_models
        self._probing = False
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.test_btn = QPushButton("Test connection")
        self.test_btn.setToolTip(tooltip)
        self.test_btn.clicked.connect(self.test_connection)
        lay.addWidget(self.test_btn, 0, Qt.AlignmentFlag.AlignLeft)
        self.result = QLabel("")
        self.result.setWordWrap(True)
        self.result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.result.hide()
        lay.addWidget(self.result)

    def say(self, text: str) -> None:
        self.result.setText(text)
        self.result.setVisible(bool(text))
        if text:
            bring_into_view(self.result)

    def test_connection(self) -> None:
        if self._probing:
            return
        job = self._job()
        if isinstance(job, str):
            self.say(f"✗ {job}")
            return
        self._probing = True
        self.test_btn.setText("Testing…")
        self.say("Connecting…")

        def done(res: tuple[str, list[str]]) -> None:
            status, models = res
            if models and self._on_models is not None:
                self._on_models(models)
            self.say(plain(status) if status.startswith(WARN) else f"✓ {plain(status)}")

        def finished() -> None:
            self._probing = False
            self.test_btn.setText("Test connection")

        self._runner.submit(job, name=self._channel, channel=self._channel, on_done=done,
                            on_error=lambda exc, _tb: self.say(f"✗ {plain(exc)}"), on_finished=finished)


class ServerPanel(QWidget):
    """The row under a server's fields: its API key and its Test connection."""

    def __init__(self, runner: TaskRunner, name: KeyName, settings: Callable[[], object | str],
                 on_models: Callable[[list[str]], None] | None = None, parent: QWidget | None = None,
                 servers: ModelServers | None = None) -> None:
        super().__init__(parent)
        self._settings = settings
        self._servers = servers or ModelServers()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.key = ApiKeyRow(runner, name, self)
        lay.addWidget(self.key)
        tip = ("Ask the server for its models and embed a word with the chosen model." if name == "embedder" else
               "Rank a test pair of passages on the server and time it.")
        self.tester = ServerTester(runner, self._job, channel=f"{name}-probe", tooltip=tip, on_models=on_models,
                                   parent=self)
        lay.addWidget(self.tester)

    def _job(self) -> ProbeJob | str:
        current = self._settings()
        if isinstance(current, str):
            return current
        key = self.key.typed_key() or None  # a key typed but not saved yet is tried as it is
        if isinstance(current, EmbedderSettings):
            es = current
            return lambda: self._servers.test_openai(es, key)
        if isinstance(current, SearchSettings):
            ss = current
            return lambda: self._servers.test_reranker(ss, key)
        return "Nothing to test."


class ServerRows:
    """What the generated Settings dialog (gui/settings/) adds for model servers: the OpenAI model box with the
    server's list, the embedder's and the reranker's key + Test rows (after their groups' last field), and the
    prefixes of a known model filled in as the person picks it. ``data()`` is the dialog's settings as a dict."""

    EMBEDDER_ROW = "embedder.openai_timeout_s"
    RERANK_ROW = "search.rerank_timeout_s"

    def __init__(self, runner: TaskRunner, data: Callable[[], dict[str, Any]], servers: ModelServers) -> None:
        self._runner = runner
        self._data = data
        self._servers = servers
        self.embedder: ServerPanel | None = None
        self.rerank: ServerPanel | None = None
        self._editors: Mapping[str, FieldEditor] = {}

    @staticmethod
    def overrides() -> dict[str, type[FieldEditor]]:
        return {"embedder.openai_model": ComboTextEditor}

    def rows(self) -> dict[str, Callable[[QWidget], QWidget]]:
        return {self.EMBEDDER_ROW: self._embedder_row, self.RERANK_ROW: self._rerank_row}

    def wire(self, editors: Mapping[str, FieldEditor]) -> None:
        """Once every page is built: fill prefixes when the person types or picks a known OpenAI model (a value
        loaded from the file is left as it is)."""
        self._editors = editors
        model = editors.get("embedder.openai_model")
        if isinstance(model, ComboTextEditor):
            line = model.combo.lineEdit()
            if line is not None:
                line.textEdited.connect(self._prefill)
            model.combo.textActivated.connect(self._prefill)

    def _prefill(self, model: str) -> None:
        q, d = self._editors.get("embedder.query_prefix"), self._editors.get("embedder.document_prefix")
        if q is None or d is None:
            return
        new = prefixes_to_fill(model, str(q.value()), str(d.value()))
        if new is not None:
            q.set_value(new[0])
            d.set_value(new[1])

    def _section(self, name: str, cls: type[Any]) -> Any:
        try:
            return msgspec.convert(self._data().get(name, {}), cls)
        except msgspec.ValidationError:
            return f"Fix the {name.capitalize()} settings marked in red first."

    def _embedder_row(self, page: QWidget) -> QWidget:
        def current() -> EmbedderSettings | str:
            es = self._section("embedder", EmbedderSettings)
            return es if isinstance(es, str) else dataclasses.replace(es, kind="openai")

        models = self._editors.get("embedder.openai_model") or getattr(page, "editors", {}).get(
            "embedder.openai_model")
        fill = models.set_suggestions if isinstance(models, ComboTextEditor) else None
        self.embedder = ServerPanel(self._runner, "embedder", current, on_models=fill, parent=page,
                                    servers=self._servers)
        return self.embedder

    def _rerank_row(self, page: QWidget) -> QWidget:
        self.rerank = ServerPanel(self._runner, "rerank", lambda: self._section("search", SearchSettings),
                                  parent=page, servers=self._servers)
        return self.rerank
