"""Keeps the prompt-context block in step with the results model: re-packs on a worker whenever the included
results (the model's CheckStateRole) or the budget change, and copies exactly the block that is shown.

The controller reads "included" from the results model and nowhere else; it never keeps its own list.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable

from PySide6.QtCore import QModelIndex, QObject, Qt, Signal

from ..models import ContextReport
from ..service_api import MemoryApi
from . import desktop
from .messages import error_text
from .results_model import ResultsModel
from .tasks import TaskRunner

log = logging.getLogger(__name__)
BUDGET_STEP = 64  # a raised budget is rounded up to this


def budget_to_fit(report: ContextReport | None) -> int | None:
    """When the budget fits none of the included passages: the budget that fits the best-ranked one (rounded up);
    None when something fits or nothing is included."""
    if report is None or report.items or not report.dropped:
        return None
    need = report.dropped[0].tokens
    return -(-need // BUDGET_STEP) * BUDGET_STEP


def fits_nothing_text(report: ContextReport) -> str:
    return (f"Nothing fits the {report.budget:,}-token budget: the best included passage needs "
            f"{report.dropped[0].tokens:,} tokens.")


def block_summary(report: ContextReport) -> str:
    """What the block holds, from the packing whose text is copied: passages, tokens, and what did not fit."""
    n, dropped = len(report.items), len(report.dropped)
    text = f"{n} passage{'s' if n != 1 else ''} in the block · {report.tokens_used:,} / {report.budget:,} tokens"
    return text + (f" · {dropped} did not fit" if dropped else "")


class ContextController(QObject):
    report_ready = Signal(object)  # ContextReport | None (None: nothing to pack)
    failed = Signal(str)
    copied = Signal(object)  # the ContextReport whose text is now on the clipboard
    nothing_to_copy = Signal()

    def __init__(self, model: ResultsModel, runner: TaskRunner, budget: int, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self._runner = runner
        self._svc: MemoryApi | None = None
        self.budget = budget
        self.report: ContextReport | None = None
        self.pending = False
        self._copy_when_ready = False
        # folders being read right now: roots for the relative [Source] paths before they are recorded as roots
        self.roots_in_flight: Callable[[], list[str]] = list
        model.modelReset.connect(self.repack)
        model.dataChanged.connect(self._data_changed)

    def set_service(self, service: MemoryApi | None) -> None:
        self._svc = service

    def set_budget(self, tokens: int) -> None:
        if tokens != self.budget:
            self.budget = tokens
            self.repack()

    def _data_changed(self, _a: QModelIndex, _b: QModelIndex, roles: list[int]) -> None:
        if not roles or Qt.ItemDataRole.CheckStateRole in roles:
            self.repack()

    def repack(self) -> None:
        """Pack the included results under the budget (worker; the latest request wins)."""
        svc = self._svc
        if svc is None:
            return
        if not self.model.rowCount():
            self._runner.invalidate("context")
            self.pending = False
            self._set(None)
            return
        included, budget = self.model.included_results(), self.budget
        busy = self.roots_in_flight()
        extra = {"extra_roots": busy} if busy and "extra_roots" in inspect.signature(svc.build_context).parameters \
            else {}
        self.pending = True
        self._runner.submit(lambda: svc.build_context(included, budget, **extra), name="context", channel="context",
                            on_done=self._done, on_error=self._failed)

    def copy(self) -> None:
        """Put exactly the shown block on the clipboard (after a pending re-pack, if one is running)."""
        if self.pending:
            self._copy_when_ready = True
            return
        if self.report is None or not self.report.text:
            self.nothing_to_copy.emit()
            return
        desktop.copy_text(self.report.text)
        self.copied.emit(self.report)

    def _set(self, report: ContextReport | None) -> None:
        self.report = report
        self.report_ready.emit(report)

    def _done(self, report: ContextReport) -> None:
        self.pending = False
        self._set(report)
        if self._copy_when_ready:
            self._copy_when_ready = False
            self.copy()

    def _failed(self, exc: BaseException, tb: str) -> None:
        self.pending = False
        self._copy_when_ready = False
        log.error("building the context failed:\n%s", tb)
        self._set(None)
        self.failed.emit(f"Could not build the context: {error_text(exc)}")
