"""The Embedder page's provider-specific part: Ollama's Test connection and its model list (the rest of the page
is generated from the schema). The probe is the service's (``ModelServers.test_ollama``), run on a worker."""

from __future__ import annotations

import re
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

from ...config import EmbedderSettings
from ..tasks import TaskRunner
from .editors import ComboTextEditor

ProbeFn = Callable[[EmbedderSettings], tuple[str, list[str]]]


def plain_error(exc: BaseException | str) -> str:
    """An error as a sentence for people: no Markdown backticks, no "[Errno 111]", and the fix said once."""
    text = str(exc).replace("`", "")
    refused = r"\[Errno (111|61|10061)\]\s*Connection refused"
    if "ollama serve" in text:  # the message already says how to start it
        text = re.sub(refused, "connection refused", text)
    else:
        text = re.sub(refused, "connection refused (is Ollama running? Start it with: ollama serve)", text)
    text = re.sub(r"\[Errno -?\d+\]\s*", "", text)
    text = re.sub(r"<urlopen error (.*?)>", r"\1", text)
    return text.strip()


class OllamaTester(QWidget):
    """Test connection (on a worker) and the result in full, wrapped under the button; fills the model list."""

    def __init__(self, runner: TaskRunner, probe: ProbeFn, current: Callable[[], EmbedderSettings | str],
                 models: ComboTextEditor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._runner = runner
        self._probe = probe
        self._current = current
        self._models = models
        self._probing = False
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.test_btn = QPushButton("Test connection")
        self.test_btn.setToolTip("Ask the server for its version and models, and embed a word with the model.")
        self.test_btn.clicked.connect(self.test_connection)
        lay.addWidget(self.test_btn, 0, Qt.AlignmentFlag.AlignLeft)
        self.test_result = QLabel("")
        self.test_result.setWordWrap(True)
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.test_result.hide()
        lay.addWidget(self.test_result)

    def _say(self, text: str) -> None:
        self.test_result.setText(text)
        self.test_result.setVisible(bool(text))
        self._fit_result()
        if text:
            from .servers import bring_into_view

            bring_into_view(self.test_result)

    def resizeEvent(self, e: QResizeEvent) -> None:
        super().resizeEvent(e)
        self._fit_result()

    def _fit_result(self) -> None:
        """The result's real height at its width (a wrapping label's own hint reserves extra lines): in full, no
        gap under it."""
        label = self.test_result
        need = max(label.heightForWidth(max(label.width(), 1)), label.fontMetrics().height())
        if label.minimumHeight() != need or label.maximumHeight() != need:
            label.setFixedHeight(need)

    def test_connection(self) -> None:
        if self._probing:  # stays enabled while it runs: disabling it would throw the focus to the next field
            return
        es = self._current()
        if isinstance(es, str):
            self._say(f"✗ {es}")
            return
        self._probing = True
        self.test_btn.setText("Testing…")
        self._say(f"Connecting to {es.ollama_url}…")

        def done(res: tuple[str, list[str]]) -> None:
            status, models = res
            self._models.set_suggestions(models)
            self._say(f"✓ {plain_error(status)}" + (f" · {len(models)} model(s) on the server" if models else ""))

        def failed(exc: BaseException, _tb: str) -> None:
            self._say(f"✗ {plain_error(exc)}")

        def finished() -> None:
            self._probing = False
            self.test_btn.setText("Test connection")

        self._runner.submit(lambda: self._probe(es), name="ollama-probe", channel="ollama-probe",
                            on_done=done, on_error=failed, on_finished=finished)
