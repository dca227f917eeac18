"""One settings page generated from a PageSpec: a form of editors (in boxes where fields name a ``group``), with
load (settings → editors), values (editors → keys and values) and problems shown beside their fields.

A field with ``when={"kind": ["ollama"]}`` is editable only while its sibling has one of those values (its value is
kept either way). Provider-specific controls (Ollama's Test connection) come in as ``extra_rows`` placed after a
named field, and a field can get another editor through ``overrides``; everything else is the schema's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from ...config import Settings
from ...settings_schema import PageSpec
from .editors import FieldEditor, make_editor

ExtraRow = Callable[["SettingsPage"], QWidget]


class SettingsPage(QScrollArea):
    changed = Signal()

    def __init__(self, spec: PageSpec, overrides: Mapping[str, type[FieldEditor]] | None = None,
                 extra_rows: Mapping[str, ExtraRow] | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.spec = spec
        self.setWidgetResizable(True)
        self.setFrameShape(QScrollArea.Shape.NoFrame)
        inner = QWidget()
        inner.setObjectName(f"page:{spec.key or 'general'}")
        outer = QVBoxLayout(inner)
        outer.setContentsMargins(12, 8, 12, 8)
        title = QLabel(spec.title)
        title.setObjectName("PageTitle")
        outer.addWidget(title)
        self.editors: dict[str, FieldEditor] = {}
        self.labels: dict[str, QLabel] = {}
        row_height = QLineEdit().sizeHint().height()
        form: QFormLayout | None = None
        group: object = object()
        for f in spec.visible_fields:
            if form is None or f.hints.get("group") != group:
                group = f.hints.get("group")
                box = QGroupBox(str(group)) if group else QWidget()
                form = QFormLayout(box)
                form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
                form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
                form.setLabelAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
                if not group:
                    form.setContentsMargins(0, 0, 0, 0)
                outer.addWidget(box)
            ed = make_editor(f, inner, (overrides or {}).get(f.name))
            if f.kind == "bool":
                form.addRow(ed.widget)
            else:
                label = QLabel(f.title)
                label.setBuddy(ed.input)
                label.setToolTip(f.help)
                # level with a one-line input, and at the top of a taller one or of an input with its error line
                label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
                label.setFixedHeight(min(ed.input.sizeHint().height(), row_height))
                self.labels[f.name] = label
                form.addRow(label, ed.widget)
            ed.changed.connect(self.changed.emit)
            self.editors[f.name] = ed
            if extra_rows and f.name in extra_rows:
                form.addRow("", extra_rows[f.name](self))
        if spec.note:
            note = QLabel(spec.note)
            note.setWordWrap(True)
            note.setObjectName("Muted")
            outer.addWidget(note)
        outer.addStretch(1)
        self.setWidget(inner)
        self._wire_conditions()

    def _wire_conditions(self) -> None:
        """Enable each ``when`` field from its sibling's value, now and on every change."""
        prefix = f"{self.spec.key}." if self.spec.key else ""
        for ed in self.editors.values():
            for sibling in ed.spec.hints.get("when", {}):
                src = self.editors.get(prefix + sibling)
                if src is not None:
                    src.changed.connect(self._apply_conditions)
        self._apply_conditions()

    def _apply_conditions(self) -> None:
        prefix = f"{self.spec.key}." if self.spec.key else ""
        for name, ed in self.editors.items():
            when: dict[str, Any] = ed.spec.hints.get("when", {})
            on = all(prefix + k not in self.editors or self.editors[prefix + k].value() in allowed
                     for k, allowed in when.items())
            ed.widget.setEnabled(on)
            if name in self.labels:
                self.labels[name].setEnabled(on)

    def load(self, settings: Settings) -> None:
        for ed in self.editors.values():
            ed.set_value(ed.spec.value_in(settings))
        self._apply_conditions()

    def values(self) -> dict[tuple[str, ...], Any]:
        return {ed.spec.keys: ed.value() for ed in self.editors.values()}

    def show_problems(self, problems: Mapping[str, str]) -> int:
        """Show each field's problem under it (clearing the others); returns how many this page has."""
        for name, ed in self.editors.items():
            ed.show_problem(problems.get(name, ""))
        return sum(1 for name in self.editors if name in problems)
