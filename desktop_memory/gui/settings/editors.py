"""One editor per settings field, chosen by the field's kind (settings_schema.FieldSpec), never by its name.

An editor's range is the schema's range, so a valid value is shown as it is and given back unchanged: a spin box
that cannot hold a value would clamp it without a word. Exclusive bounds (``gt=0``) are allowed by the widget and
reported beside it by the dialog's validation, which is the settings file's own.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ...settings_schema import INT_LIMIT, FieldSpec

FLOAT_LIMIT = 1e15
FLOAT_DECIMALS = 6


class FieldEditor(QObject):
    """``widget`` is the whole row's editor (input plus the error line under it); ``input`` the control itself."""

    changed = Signal()

    def __init__(self, spec: FieldSpec, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.spec = spec
        self.widget = QWidget(parent)
        self.widget.setObjectName(f"field:{spec.name}")
        lay = QVBoxLayout(self.widget)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.row = QHBoxLayout()
        self.row.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(self.row)
        self.error = QLabel()
        self.error.setObjectName("FieldError")
        self.error.setWordWrap(True)
        self.error.hide()
        lay.addWidget(self.error)
        self.input: QWidget = self._build()
        for w in (self.input, self.widget):
            if spec.help:
                w.setToolTip(spec.help)
                w.setWhatsThis(spec.help)
        self.input.setAccessibleName(spec.title)

    # -- per kind -------------------------------------------------------------------------------------------
    def _build(self) -> QWidget:
        raise NotImplementedError

    def value(self) -> Any:
        raise NotImplementedError

    def set_value(self, value: Any) -> None:
        raise NotImplementedError

    # -- shared ---------------------------------------------------------------------------------------------
    def show_problem(self, text: str) -> None:
        """The problem under the field, and the field tinted through its palette. Not a style sheet border: a
        style-sheeted spin box loses its arrows (and, polished back, its frame after Restore Defaults)."""
        self.error.setText(f"✗ {text}" if text else "")
        self.error.setVisible(bool(text))
        if bool(text) == bool(self.input.property("invalid")):
            return
        self.input.setProperty("invalid", bool(text))
        for w in (self.input, *self.input.findChildren(QLineEdit)):
            if text:
                from ..style import colors

                pal = QPalette(w.palette())
                pal.setColor(QPalette.ColorRole.Base, colors()["error_bg"])
                w.setPalette(pal)
            else:
                w.setPalette(QPalette())  # back to the application's (theme) palette
                w.setAttribute(Qt.WidgetAttribute.WA_SetPalette, False)

    def problem(self) -> str:
        return self.error.text()[2:] if not self.error.isHidden() else ""


class IntEditor(FieldEditor):
    def _build(self) -> QSpinBox:
        s = self.spec
        box = QSpinBox()
        box.setRange(int(s.minimum) if s.minimum is not None else -INT_LIMIT,
                     int(s.maximum) if s.maximum is not None else INT_LIMIT)
        box.setSingleStep(int(s.hints.get("step", 1)))
        box.setSuffix(str(s.hints.get("unit", "")))
        special = s.hints.get("special", {})
        if box.minimum() in special:
            box.setSpecialValueText(str(special[box.minimum()]))
        box.setMinimumWidth(140)
        box.valueChanged.connect(lambda _v: self.changed.emit())
        self.row.addWidget(box)
        self.row.addStretch(1)
        self.box = box
        return box

    def value(self) -> int:
        return self.box.value()

    def set_value(self, value: Any) -> None:
        self.box.setValue(int(value))


class _FloatSpin(QDoubleSpinBox):
    """Six decimals held, trailing zeros not shown: 0.125 stays 0.125 and 50 shows as 50."""

    def textFromValue(self, value: float) -> str:
        text = self.locale().toString(value, "f", self.decimals())
        point = self.locale().decimalPoint()
        return text.rstrip("0").rstrip(point) if point in text else text


class FloatEditor(FieldEditor):
    def _build(self) -> QDoubleSpinBox:
        s = self.spec
        box = _FloatSpin()
        box.setDecimals(int(s.hints.get("decimals", FLOAT_DECIMALS)))
        box.setRange(float(s.minimum) if s.minimum is not None else -FLOAT_LIMIT,
                     float(s.maximum) if s.maximum is not None else FLOAT_LIMIT)
        box.setSingleStep(float(s.hints.get("step", 1)))
        box.setSuffix(str(s.hints.get("unit", "")))
        box.setMinimumWidth(140)
        box.valueChanged.connect(lambda _v: self.changed.emit())
        self.row.addWidget(box)
        self.row.addStretch(1)
        self.box = box
        self._loaded: float | None = None
        return box

    def value(self) -> float:
        shown = self.box.value()
        # a value with more decimals than the box holds comes back as loaded unless the person changed it
        if self._loaded is not None and shown == round(self._loaded, self.box.decimals()):
            return self._loaded
        return shown

    def set_value(self, value: Any) -> None:
        self._loaded = float(value)
        self.box.setValue(float(value))


class TextEditor(FieldEditor):
    """Text kept exactly as typed (a prefix's trailing space matters); optional Browse… for files and folders."""

    def _build(self) -> QLineEdit:
        s = self.spec
        edit = QLineEdit()
        edit.setPlaceholderText(str(s.hints.get("placeholder", "")))
        edit.textChanged.connect(lambda _t: self.changed.emit())
        self.row.addWidget(edit, 1)
        browse = s.hints.get("browse")
        if browse:
            self.browse_btn = QPushButton("Browse…")
            self.browse_btn.clicked.connect(self._browse)
            self.row.addWidget(self.browse_btn)
        self.edit = edit
        return edit

    def _browse(self) -> None:
        if self.spec.hints.get("browse") == "dir":
            got = QFileDialog.getExistingDirectory(self.widget, self.spec.title, self.edit.text())
        else:
            got, _ = QFileDialog.getSaveFileName(self.widget, self.spec.title, self.edit.text(),
                                                 options=QFileDialog.Option.DontConfirmOverwrite)
        if got:
            self.edit.setText(got)

    def value(self) -> str:
        return self.edit.text()

    def set_value(self, value: Any) -> None:
        self.edit.setText(str(value))


class ComboTextEditor(TextEditor):
    """Free text with suggestions (the Ollama model list): an editable combo box."""

    def _build(self) -> QComboBox:  # type: ignore[override]
        combo = QComboBox()
        combo.setEditable(True)
        combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        combo.currentTextChanged.connect(lambda _t: self.changed.emit())
        self.row.addWidget(combo, 1)
        self.combo = combo
        return combo

    def set_suggestions(self, items: list[str]) -> None:
        current = self.combo.currentText()
        self.combo.clear()
        self.combo.addItems(items)
        self.combo.setCurrentText(current)

    def value(self) -> str:
        return self.combo.currentText()

    def set_value(self, value: Any) -> None:
        self.combo.setCurrentText(str(value))


class BoolEditor(FieldEditor):
    def _build(self) -> QCheckBox:
        box = QCheckBox(self.spec.title)
        box.toggled.connect(lambda _on: self.changed.emit())
        self.row.addWidget(box)
        self.row.addStretch(1)
        self.box = box
        return box

    def value(self) -> bool:
        return self.box.isChecked()

    def set_value(self, value: Any) -> None:
        self.box.setChecked(bool(value))


class ChoiceEditor(FieldEditor):
    """A combo box of the Literal's values with their labels; a ``hidden_choices`` value (the test-only "hash"
    embedder) is offered only while it is the value, so opening Settings never changes it."""

    def _build(self) -> QComboBox:
        combo = QComboBox()
        self.hidden_choices = tuple(self.spec.hints.get("hidden_choices", ()))
        for c in self.spec.choices:
            if c not in self.hidden_choices:
                combo.addItem(self.spec.label(c), c)
        combo.currentIndexChanged.connect(lambda _i: self.changed.emit())
        self.row.addWidget(combo, 1)
        self.combo = combo
        return combo

    def value(self) -> Any:
        return self.combo.currentData()

    def set_value(self, value: Any) -> None:
        if self.combo.findData(value) < 0 and value in self.spec.choices:
            self.combo.addItem(self.spec.label(value), value)
        self.combo.setCurrentIndex(self.combo.findData(value))


class RadioEditor(FieldEditor):
    """The choices as radio buttons (``widget="radio"``): for a few long, exclusive options."""

    def _build(self) -> QWidget:
        box = QWidget()
        lay = QVBoxLayout(box)
        lay.setContentsMargins(0, 0, 0, 0)
        self.group = QButtonGroup(box)
        self.buttons: dict[Any, QRadioButton] = {}
        self.hidden_choices = tuple(self.spec.hints.get("hidden_choices", ()))
        for c in self.spec.choices:
            btn = QRadioButton(self.spec.label(c))
            btn.setVisible(c not in self.hidden_choices)
            self.group.addButton(btn)
            self.buttons[c] = btn
            lay.addWidget(btn)
            btn.toggled.connect(self._toggled)
        self.row.addWidget(box, 1)
        return box

    def _toggled(self, on: bool) -> None:
        if on:
            self.changed.emit()

    def value(self) -> Any:
        return next((c for c, b in self.buttons.items() if b.isChecked()), None)

    def set_value(self, value: Any) -> None:
        if value in self.buttons:
            self.buttons[value].setVisible(True)
            self.buttons[value].setChecked(True)


class LinesEditor(FieldEditor):
    """A list of strings, one per line (a comma can be part of a pattern); blank lines are not values."""

    def _build(self) -> QPlainTextEdit:
        edit = QPlainTextEdit()
        edit.setPlaceholderText(str(self.spec.hints.get("placeholder", "")))
        edit.setTabChangesFocus(True)
        edit.setFixedHeight(edit.fontMetrics().lineSpacing() * 4 + 12)
        edit.textChanged.connect(self.changed.emit)
        self.row.addWidget(edit, 1)
        self.edit = edit
        return edit

    def value(self) -> tuple[str, ...]:
        return tuple(line for line in self.edit.toPlainText().split("\n") if line.strip())

    def set_value(self, value: Any) -> None:
        self.edit.setPlainText("\n".join(value))


EDITORS: dict[str, type[FieldEditor]] = {"int": IntEditor, "float": FloatEditor, "str": TextEditor,
                                         "bool": BoolEditor, "choice": ChoiceEditor, "lines": LinesEditor}


def make_editor(spec: FieldSpec, parent: QWidget | None = None,
                override: type[FieldEditor] | None = None) -> FieldEditor:
    """The editor for ``spec``: ``override`` if given, radio buttons when the field asks, else by kind."""
    if override is not None:
        return override(spec, parent)
    if spec.kind == "choice" and spec.hints.get("widget") == "radio":
        return RadioEditor(spec, parent)
    return EDITORS[spec.kind](spec, parent)
