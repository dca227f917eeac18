"""Settings dialog: embedder (local / Ollama with Test connection), search, indexing, context, storage, look.

The dialog edits a *copy* of the settings; the main window applies the result (persisting it, switching the
embedder in the background and offering to re-embed when the model changed).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ..config import BACKENDS, THEMES, EmbedderSettings, Settings, default_db_path
from ..context.paths import PATH_STYLES
from .search_view import BACKEND_LABELS
from .tasks import TaskRunner

ProbeFn = Callable[[EmbedderSettings], tuple[str, list[str]]]

PATH_STYLE_LABELS = {
    "relative": "Relative to the indexed folder (notes/plan.md)",
    "absolute": "Absolute path (/home/you/notes/plan.md)",
    "name": "File name only (plan.md)",
}

# Plain-language help, shown as tooltips and "What's this" text
HELP = {
    "backend": "How results are found. Hybrid: keyword matches and meaning-based (semantic) matches merged; "
               "the best default. Keyword (FTS5): SQLite's full-text index, exact words (and word forms), "
               "fast. BM25: the same keyword scoring computed in Python, for comparison. Semantic only: by "
               "meaning, finds passages that use other words.",
    "top_k": "How many results a search shows (top-k). More results fill more of the prompt context.",
    "kw_weight": "In Hybrid search, how much the keyword ranking counts against the semantic one. Raise it "
                 "if exact words (names, error messages) matter most to you.",
    "dense_weight": "In Hybrid search, how much the semantic (meaning) ranking counts. Raise it for questions "
                    "asked in your own words.",
    "rrf_k": "Reciprocal Rank Fusion constant: how the two rankings are merged. Small values trust each "
             "ranking's top few results more; large values even things out. 60 is the textbook default.",
    "budget": "The largest prompt context to build, in tokens (about ¾ of a word each). Passages are "
              "added in rank order until the next one would not fit.",
    "path_style": "How each passage's [Source: …] line names its file in the copied context. Relative keeps "
                  "your user name and folder layout out of a chat; search --json always has the full path.",
    "target_chars": "The size a passage (chunk) aims for, in characters. Smaller passages are more precise, "
                    "larger ones carry more context. Applies to files indexed from now on.",
    "max_chars": "No passage is ever longer than this (chunk hard limit): the safety net for very long lines "
                 "such as minified code. Keep it near what the model reads (about 1,100 characters).",
    "overlap": "Characters repeated between neighbouring passages, so a sentence cut at a boundary is still "
               "found whole in one of them.",
    "code_lines": "Lines per passage for source code.",
    "max_mb": "Files larger than this are skipped (listed in the Library with the reason).",
    "ignore": "Extra patterns to skip, comma separated, in .gitignore syntax relative to each indexed folder "
              "(e.g. *.log, drafts/, docs/*.md). .gitignore and .dmignore files inside indexed folders are "
              "honoured too.",
    "batch": "How many passages are embedded per model call. Larger batches are a little faster and use "
             "more memory.",
    "threads": "CPU threads for the local model; automatic uses the cores you have.",
    "query_prefix": "Text put before every search query before embedding. Some models expect one "
                    "(nomic-embed-text: \"search_query: \"); MiniLM needs none.",
    "doc_prefix": "Text put before every passage before embedding (nomic-embed-text: \"search_document: \"). "
                  "Changing it re-embeds the library.",
    "ollama_url": "Where the Ollama server listens; it must be running (ollama serve).",
    "ollama_model": "An embedding model pulled into Ollama (ollama pull nomic-embed-text). Test connection "
                    "lists the models the server has.",
    "open_with": "Command that opens a text, Markdown or code result at its line; {path}, {line} and {page} "
                 "are filled in, no shell is involved. Empty: a known editor on your PATH (VS Code, Sublime, "
                 "Kate, gedit), else the default app.",
    "open_pdf_with": "Command that opens a PDF result at its page, e.g. okular --page {page} {path}. Empty: a "
                     "known viewer on your PATH (Okular, Evince, Zathura, SumatraPDF), else the default app.",
}


def plain_error(exc: BaseException | str) -> str:
    """An error as a sentence for people: no Markdown backticks, no "[Errno 111]"."""
    text = str(exc).replace("`", "")
    text = re.sub(r"\[Errno (111|61|10061)\]\s*Connection refused",
                  "connection refused (is Ollama running? Start it with: ollama serve)", text)
    text = re.sub(r"\[Errno -?\d+\]\s*", "", text)
    text = re.sub(r"<urlopen error (.*?)>", r"\1", text)
    return text.strip()


def _help(widget: QWidget, key: str) -> QWidget:
    widget.setToolTip(HELP[key])
    widget.setWhatsThis(HELP[key])
    return widget


def probe_ollama(es: EmbedderSettings) -> tuple[str, list[str]]:
    """(status line, model names) for the Test connection button; raises EmbedderError with the fix.

    Runs on a worker thread (network I/O).
    """
    from ..embed.ollama import OllamaEmbedder
    from ..errors import EmbedderError

    emb = OllamaEmbedder(es)
    try:
        models = emb.list_models()
        try:
            status = emb.check_connection()
        except EmbedderError as exc:
            # server is up but the chosen model is not usable: still return the list so the user can pick one
            status = f"Server reachable, but: {exc}"
        return status, models
    finally:
        emb.close()


def _spin(lo: int, hi: int, val: int, step: int = 1, suffix: str = "") -> QSpinBox:
    s = QSpinBox()
    s.setRange(lo, hi)
    s.setSingleStep(step)
    s.setValue(int(val))
    if suffix:
        s.setSuffix(suffix)
    return s


def _dspin(lo: float, hi: float, val: float, step: float = 0.1) -> QDoubleSpinBox:
    s = QDoubleSpinBox()
    s.setRange(lo, hi)
    s.setSingleStep(step)
    s.setDecimals(2)
    s.setValue(float(val))
    return s


class SettingsDialog(QDialog):
    def __init__(
        self,
        settings: Settings,
        runner: TaskRunner,
        parent: QWidget | None = None,
        probe: ProbeFn = probe_ollama,
        theme: str = "system",
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setMinimumWidth(560)
        self._orig = settings
        self._runner = runner
        self._probe = probe
        self.theme = theme
        self._probing = False
        tabs = QTabWidget()
        tabs.addTab(self._embedder_tab(settings), "&Embedder")
        tabs.addTab(self._search_tab(settings), "&Search")
        tabs.addTab(self._indexing_tab(settings), "&Indexing")
        tabs.addTab(self._storage_tab(settings, theme), "S&torage && look")
        self.tabs = tabs
        lay = QVBoxLayout(self)
        lay.addWidget(tabs)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
            | QDialogButtonBox.StandardButton.RestoreDefaults
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.buttons.button(QDialogButtonBox.StandardButton.RestoreDefaults).clicked.connect(self._restore_defaults)
        lay.addWidget(self.buttons)

    # -- tabs --------------------------------------------------------------------------------------------
    def _embedder_tab(self, s: Settings) -> QWidget:
        w = QWidget()
        lay = QVBoxLayout(w)
        self.local_radio = QRadioButton("Local model (runs on this computer, nothing leaves it)")
        self.ollama_radio = QRadioButton("Ollama server")
        grp = QButtonGroup(w)
        grp.addButton(self.local_radio)
        grp.addButton(self.ollama_radio)
        lay.addWidget(self.local_radio)
        local_box = QWidget()
        lf = QFormLayout(local_box)
        lf.setContentsMargins(24, 0, 0, 0)
        row = QHBoxLayout()
        self.model_dir = QLineEdit(s.embedder.local_model_dir)
        self.model_dir.setPlaceholderText("bundled all-MiniLM-L6-v2 (int8)")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse_model)
        row.addWidget(self.model_dir, 1)
        row.addWidget(browse)
        lf.addRow("Model folder", row)
        self.threads = _spin(0, 64, s.embedder.threads)
        self.threads.setSpecialValueText("automatic")
        _help(self.threads, "threads")
        lf.addRow("Threads", self.threads)
        lay.addWidget(local_box)
        lay.addWidget(self.ollama_radio)
        oll_box = QWidget()
        of = QFormLayout(oll_box)
        of.setContentsMargins(24, 0, 0, 0)
        self.ollama_url = QLineEdit(s.embedder.ollama_url)
        self.ollama_url.setPlaceholderText("http://localhost:11434")
        _help(self.ollama_url, "ollama_url")
        of.addRow("Base URL", self.ollama_url)
        self.ollama_model = QComboBox()
        self.ollama_model.setEditable(True)
        self.ollama_model.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.ollama_model.setCurrentText(s.embedder.ollama_model)
        _help(self.ollama_model, "ollama_model")
        of.addRow("Model", self.ollama_model)
        trow = QHBoxLayout()
        self.test_btn = QPushButton("Test connection")
        self.test_btn.clicked.connect(self.test_connection)
        trow.addWidget(self.test_btn)
        self.test_result = QLabel("")
        self.test_result.setWordWrap(True)
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        trow.addWidget(self.test_result, 1)
        of.addRow("", trow)
        lay.addWidget(oll_box)
        common = QGroupBox("Both")
        cf = QFormLayout(common)
        self.batch = _spin(1, 1024, s.embedder.batch_size)
        _help(self.batch, "batch")
        cf.addRow("Batch size", self.batch)
        self.query_prefix = QLineEdit(s.embedder.query_prefix)
        self.query_prefix.setPlaceholderText('e.g. "search_query: " for nomic-embed-text')
        _help(self.query_prefix, "query_prefix")
        cf.addRow("Query prefix", self.query_prefix)
        self.doc_prefix = QLineEdit(s.embedder.document_prefix)
        self.doc_prefix.setPlaceholderText('e.g. "search_document: "')
        _help(self.doc_prefix, "doc_prefix")
        cf.addRow("Document prefix", self.doc_prefix)
        lay.addWidget(common)
        note = QLabel(
            "Changing the model or the document prefix re-embeds the library in the background (a query "
            "prefix does not). Keyword search keeps working meanwhile; two kinds of vectors are never mixed "
            "in one index."
        )
        note.setWordWrap(True)
        note.setObjectName("Muted")
        lay.addWidget(note)
        lay.addStretch(1)
        (self.ollama_radio if s.embedder.kind == "ollama" else self.local_radio).setChecked(True)

        def sync() -> None:
            local = self.local_radio.isChecked()
            local_box.setEnabled(local)
            oll_box.setEnabled(not local)

        self.local_radio.toggled.connect(lambda _on: sync())
        sync()
        return w

    def _search_tab(self, s: Settings) -> QWidget:
        w = QWidget()
        f = QFormLayout(w)
        self.backend = QComboBox()
        for b in BACKENDS:
            self.backend.addItem(BACKEND_LABELS.get(b, b), b)
        self.backend.setCurrentIndex(max(0, self.backend.findData(s.search.backend)))
        f.addRow("Default backend", _help(self.backend, "backend"))
        self.top_k = _spin(1, 200, s.search.top_k)
        f.addRow("Results shown (top-k)", _help(self.top_k, "top_k"))
        self.kw_weight = _dspin(0.0, 10.0, s.search.keyword_weight)
        f.addRow("Keyword weight (hybrid)", _help(self.kw_weight, "kw_weight"))
        self.dense_weight = _dspin(0.0, 10.0, s.search.dense_weight)
        f.addRow("Semantic weight (hybrid)", _help(self.dense_weight, "dense_weight"))
        self.rrf_k = _spin(1, 1000, s.search.rrf_k)
        f.addRow("Rank merging (RRF k)", _help(self.rrf_k, "rrf_k"))
        self.budget = _spin(64, 200_000, s.context.budget_tokens, 256, " tokens")
        f.addRow("Context token budget", _help(self.budget, "budget"))
        self.path_style = QComboBox()
        for st in PATH_STYLES:
            self.path_style.addItem(PATH_STYLE_LABELS.get(st, st), st)
        self.path_style.setCurrentIndex(max(0, self.path_style.findData(s.context.path_style)))
        f.addRow("Paths in copied context", _help(self.path_style, "path_style"))
        note = QLabel("Hover over a setting for what it does. Keyword (FTS5) and BM25 score the same words two "
                      "ways; Hybrid adds meaning-based search on top.")
        note.setWordWrap(True)
        note.setObjectName("Muted")
        f.addRow(note)
        return w

    def _indexing_tab(self, s: Settings) -> QWidget:
        w = QWidget()
        f = QFormLayout(w)
        self.target_chars = _spin(100, 20_000, s.chunking.target_chars, 50, " chars")
        f.addRow("Passage size", _help(self.target_chars, "target_chars"))
        self.max_chars = _spin(100, 40_000, s.chunking.max_chars, 50, " chars")
        f.addRow("Longest passage (hard limit)", _help(self.max_chars, "max_chars"))
        self.overlap = _spin(0, 5000, s.chunking.overlap_chars, 10, " chars")
        f.addRow("Overlap between passages", _help(self.overlap, "overlap"))
        self.code_lines = _spin(5, 1000, s.chunking.code_lines, 5, " lines")
        f.addRow("Code passage", _help(self.code_lines, "code_lines"))
        self.max_mb = _dspin(0.1, 10_000, s.ingest.max_file_mb, 5)
        self.max_mb.setSuffix(" MB")
        f.addRow("Skip files larger than", _help(self.max_mb, "max_mb"))
        self.ignore = QLineEdit(", ".join(s.ingest.extra_ignore))
        self.ignore.setPlaceholderText("e.g. *.log, drafts/, docs/*.md")
        f.addRow("Also ignore", _help(self.ignore, "ignore"))
        note = QLabel("Chunking changes apply to files indexed from now on; re-index a folder to apply them to it.")
        note.setWordWrap(True)
        note.setObjectName("Muted")
        f.addRow(note)
        return w

    def _storage_tab(self, s: Settings, theme: str) -> QWidget:
        w = QWidget()
        f = QFormLayout(w)
        row = QHBoxLayout()
        self.db_path = QLineEdit(s.db_path)
        self.db_path.setPlaceholderText(str(default_db_path()))
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse_db)
        row.addWidget(self.db_path, 1)
        row.addWidget(browse)
        f.addRow("Database file", row)
        note = QLabel("A new location opens (or creates) that database; the old file is left where it is.")
        note.setWordWrap(True)
        note.setObjectName("Muted")
        f.addRow(note)
        self.theme_combo = QComboBox()
        for t in THEMES:
            self.theme_combo.addItem(t.capitalize(), t)
        self.theme_combo.setCurrentIndex(max(0, self.theme_combo.findData(theme)))
        f.addRow("Appearance", self.theme_combo)
        self.open_with = QLineEdit(s.desktop.open_with)
        self.open_with.setPlaceholderText("e.g. code --goto {path}:{line}   (empty: automatic)")
        f.addRow("Open text at line with", _help(self.open_with, "open_with"))
        self.open_pdf_with = QLineEdit(s.desktop.open_pdf_with)
        self.open_pdf_with.setPlaceholderText("e.g. okular --page {page} {path}   (empty: automatic)")
        f.addRow("Open PDFs at page with", _help(self.open_pdf_with, "open_pdf_with"))
        return w

    # -- actions -----------------------------------------------------------------------------------------
    def _browse_model(self) -> None:
        d = QFileDialog.getExistingDirectory(self, "Choose an ONNX model folder", self.model_dir.text())
        if d:
            self.model_dir.setText(d)

    def _browse_db(self) -> None:
        p, _ = QFileDialog.getSaveFileName(
            self, "Database file", self.db_path.text() or str(default_db_path()), "SQLite database (*.db *.sqlite)",
            options=QFileDialog.Option.DontConfirmOverwrite,
        )
        if p:
            self.db_path.setText(p)

    def test_connection(self) -> None:
        """Probe the Ollama server on a worker; fill the model list from /api/tags."""
        if self._probing:  # stays enabled while it runs: disabling it would throw the focus to the next field
            return
        es = dataclasses.replace(self.result_settings().embedder, kind="ollama")
        self._probing = True
        self.test_btn.setText("Testing…")
        self.test_result.setText(f"Connecting to {es.ollama_url}…")

        def done(res: tuple[str, list[str]]) -> None:
            status, models = res
            current = self.ollama_model.currentText()
            self.ollama_model.clear()
            self.ollama_model.addItems(models)
            self.ollama_model.setCurrentText(current)
            self.test_result.setText(f"✓ {plain_error(status)}"
                                     + (f" · {len(models)} model(s) on the server" if models else ""))

        def failed(exc: BaseException, _tb: str) -> None:
            self.test_result.setText(f"✗ {plain_error(exc)}")

        def finished() -> None:
            self._probing = False
            self.test_btn.setText("Test connection")

        self._runner.submit(
            lambda: self._probe(es), name="ollama-probe", channel="ollama-probe",
            on_done=done, on_error=failed, on_finished=finished,
        )

    def _restore_defaults(self) -> None:
        d = Settings(db_path=self.db_path.text())  # never move the database by accident
        self._load(d)

    def _load(self, s: Settings) -> None:
        (self.ollama_radio if s.embedder.kind == "ollama" else self.local_radio).setChecked(True)
        self.model_dir.setText(s.embedder.local_model_dir)
        self.threads.setValue(s.embedder.threads)
        self.ollama_url.setText(s.embedder.ollama_url)
        self.ollama_model.setCurrentText(s.embedder.ollama_model)
        self.batch.setValue(s.embedder.batch_size)
        self.query_prefix.setText(s.embedder.query_prefix)
        self.doc_prefix.setText(s.embedder.document_prefix)
        self.backend.setCurrentIndex(max(0, self.backend.findData(s.search.backend)))
        self.top_k.setValue(s.search.top_k)
        self.kw_weight.setValue(s.search.keyword_weight)
        self.dense_weight.setValue(s.search.dense_weight)
        self.rrf_k.setValue(s.search.rrf_k)
        self.budget.setValue(s.context.budget_tokens)
        self.path_style.setCurrentIndex(max(0, self.path_style.findData(s.context.path_style)))
        self.target_chars.setValue(s.chunking.target_chars)
        self.max_chars.setValue(s.chunking.max_chars)
        self.overlap.setValue(s.chunking.overlap_chars)
        self.code_lines.setValue(s.chunking.code_lines)
        self.max_mb.setValue(s.ingest.max_file_mb)
        self.ignore.setText(", ".join(s.ingest.extra_ignore))

    def result_settings(self) -> Settings:
        """A new Settings object with the dialog's values (the original is untouched)."""
        s = self._orig
        target = self.target_chars.value()
        return dataclasses.replace(
            s,
            embedder=dataclasses.replace(
                s.embedder,
                kind="ollama" if self.ollama_radio.isChecked() else "local",
                local_model_dir=self.model_dir.text().strip(),
                threads=self.threads.value(),
                ollama_url=self.ollama_url.text().strip() or "http://localhost:11434",
                ollama_model=self.ollama_model.currentText().strip(),
                batch_size=self.batch.value(),
                query_prefix=self.query_prefix.text(),
                document_prefix=self.doc_prefix.text(),
            ),
            search=dataclasses.replace(
                s.search, backend=BACKENDS[max(0, self.backend.currentIndex())], top_k=self.top_k.value(),
                keyword_weight=self.kw_weight.value(), dense_weight=self.dense_weight.value(),
                rrf_k=self.rrf_k.value(),
            ),
            context=dataclasses.replace(s.context, budget_tokens=self.budget.value(),
                                        path_style=PATH_STYLES[max(0, self.path_style.currentIndex())]),
            desktop=dataclasses.replace(s.desktop, open_with=self.open_with.text().strip(),
                                        open_pdf_with=self.open_pdf_with.text().strip()),
            chunking=dataclasses.replace(
                s.chunking, target_chars=target, max_chars=max(self.max_chars.value(), target),
                overlap_chars=min(self.overlap.value(), target // 2), code_lines=self.code_lines.value(),
                code_overlap_lines=min(s.chunking.code_overlap_lines, self.code_lines.value() - 1),
            ),
            ingest=dataclasses.replace(
                s.ingest, max_file_mb=self.max_mb.value(),
                extra_ignore=tuple(x.strip() for x in self.ignore.text().split(",") if x.strip()),
            ),
            db_path=self.db_path.text().strip(),
        )

    def chosen_theme(self) -> str:
        return str(self.theme_combo.currentData())
