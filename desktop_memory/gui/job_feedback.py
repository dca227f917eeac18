"""What the person sees of the index-job queue (the progress panel, the status bar's semantic progress, the banners
for failures) and of the context packer (the panel's block, "copied"). Pure presentation: the rules live in
index_jobs.py and context_controller.py."""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable

from PySide6.QtCore import QObject, SignalInstance

from ..errors import StoreBusy, UserError
from ..jobs import EMBED
from ..models import ContextReport, IndexProgress, IndexSummary
from ..paths import inside_any
from .banner import BannerArea
from .context_controller import ContextController
from .context_panel import ContextPanel
from .formatting import counted
from .index_jobs import IndexJobController, Job
from .messages import error_text
from .progress_panel import ProgressPanel
from .status_bar import StatusBar

log = logging.getLogger(__name__)


def show_context_feedback(ctl: ContextController, panel: ContextPanel, status: StatusBar, *,
                          ready: SignalInstance) -> None:
    """The packed block goes to the panel (then ``ready`` fires); copying and failures are said in the status bar."""

    def report(rep: ContextReport | None) -> None:
        panel.set_report(rep)
        ready.emit()

    def copied(rep: ContextReport) -> None:
        status.showMessage(f"Copied {counted(len(rep.items), 'passage')} ({rep.tokens_used:,} tokens) "
                           "to the clipboard: paste it into your chat.", 5000)
        panel.flash_copied()

    ctl.report_ready.connect(report)
    ctl.copied.connect(copied)
    ctl.failed.connect(lambda text: status.showMessage(text, 8000))
    ctl.nothing_to_copy.connect(lambda: status.showMessage(
        "Nothing to copy: search first, and keep at least one passage included.", 5000))


def embedding_line(p: IndexProgress) -> str:
    """The progress panel's second line while vectors are made (after every file was read); a model switch's
    build beside the library's own vectors says so ("building openai:x vectors")."""
    what = "Embedding passages for semantic search"
    if p.current.startswith("building "):
        what += f" ({p.current} beside the library's own)"
    if p.chunks_to_embed:
        return f"{what}: {min(p.chunks_embedded, p.chunks_to_embed):,} of {p.chunks_to_embed:,} this run"
    return what


def removed_names(paths: list[str]) -> str:
    names = [f"“{os.path.basename(p) or p}”" for p in paths[:2]]
    more = f" and {len(paths) - 2} more" if len(paths) > 2 else ""
    return ", ".join(names) + more + (" was" if len(paths) == 1 else " were")


def without_removed(s: IndexSummary, removed: Callable[[str], bool]) -> IndexSummary:
    """The summary without the outcomes (and their counts) of files removed from the index meanwhile."""
    gone = [o for o in s.outcomes if removed(o.path)]
    if not gone:
        return s
    lost = {st: sum(1 for o in gone if o.status == st) for st in ("indexed", "unchanged", "skipped", "failed")}
    return dataclasses.replace(s, outcomes=[o for o in s.outcomes if not removed(o.path)],
                               indexed=max(0, s.indexed - lost["indexed"]),
                               unchanged=max(0, s.unchanged - lost["unchanged"]),
                               skipped=max(0, s.skipped - lost["skipped"]), failed=max(0, s.failed - lost["failed"]))


class JobFeedback(QObject):
    def __init__(self, jobs: IndexJobController, progress: ProgressPanel, status: StatusBar, banners: BannerArea,
                 *, reembed: Callable[[], None], settings: Callable[[], object], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.jobs, self.progress, self.status, self.banners = jobs, progress, status, banners
        self._reembed, self._settings = reembed, settings
        self._removed: list[str] = []  # folders/files removed while the shown job ran: its report leaves them out
        self._model_changed = False  # the next manual embedding is a re-embedding (new model), not a catch-up
        self._included: list[str] = []  # what the "Included again" banner names
        jobs.started.connect(self._started)
        jobs.accepted.connect(self._accepted)
        jobs.queue_changed.connect(self._queue_changed)
        jobs.progress.connect(self._progress)
        jobs.succeeded.connect(self._done)
        jobs.failed.connect(self._failed)
        jobs.error.connect(self.error_banner)
        jobs.removed.connect(self._left_library)
        jobs.removed.connect(lambda n, _paths: status.showMessage(
            f"Removed {counted(n, 'document')} from the index (files on disk are untouched)", 6000))
        jobs.removing.connect(lambda text: status.showMessage(text, 4000))  # a big removal, slice by slice
        jobs.waiting.connect(lambda text: status.showMessage(text[:1].upper() + text[1:], 10000))  # its turn
        progress.cancel_requested.connect(self.cancel)
        progress.resume_requested.connect(reembed)

    def model_changed(self) -> None:
        """Another model was chosen in Settings: its vectors are built beside the library's own in the background
        (progress and Cancel in the panel); search keeps using the old ones until the new set is complete."""
        self._model_changed = True
        self.jobs.auto_resume = False
        self.banners.show_message(
            "The embedding model changed: its vectors are being built beside the library's own (see the progress "
            "panel; Cancel keeps the old ones). Search keeps using the old vectors until the new ones are complete.",
            "info", key="reembed")
        self._reembed()

    def switch_database(self) -> None:
        """The old library's work stops first (within one slice); a banner says what stopped; nothing of it is
        reported as if it happened in the new library."""
        stopped = self.jobs.stop_for_switch()
        self.progress.hide()
        if stopped:
            self.banners.show_message(f"Switched database: stopped {stopped} in the previous library "
                                      "(what was done is kept there).", "info", key="db-switch")

    def remove(self, paths: list[str]) -> None:
        """Remove from the index (final); the status bar says so, and that a read of it stops first."""
        reading = [f for f in self.jobs.folders_in_flight() if inside_any(f, paths)]
        stops = " (reading it stops first)" if reading else ""
        if self.progress.isVisible() and self.progress.summary is None:
            self._removed += [p.rstrip(os.sep) or p for p in paths]
        self.status.showMessage(f"Removing {counted(len(paths), 'item')} from the index…{stops}")
        self.jobs.remove_paths(paths)

    def cancel(self) -> None:
        self.jobs.cancel()
        self.progress.set_queued(0)
        if self.jobs.is_running():
            self.progress.cancelling()

    def _started(self, job: Job) -> None:
        if self.progress.summary is not None or not self.progress.isVisible():
            self._removed = []  # a new run: what was removed during the last one is history
        read = self.jobs.burst_read
        continuing = job.kind == EMBED and job.auto and read is not None
        what = "Embedding passages without vectors" if job.kind == EMBED else ""
        self.progress.start(len(job.paths), keep_bar=continuing, what=what)  # an embedding after a read: bar goes on
        self.progress.set_queued(self.jobs.queued_reads())
        if continuing and read is not None:
            self.progress.searchable_files = read.indexed + read.unchanged
            self.progress.title.setText(f"Embedding · {counted(self.progress.searchable_files, 'file')} "
                                        "searchable by keyword")
        elif job.kind == EMBED:
            self.progress.title.setText("Embedding the library…" if job.auto else "Re-embedding the library…")

    def _accepted(self, n_paths: int) -> None:
        if not self.progress.isVisible() or self.progress.summary is not None:
            self.progress.start(n_paths)

    def _queue_changed(self, n: int) -> None:
        if n and not self.jobs.is_running() and not self.progress.isVisible():
            self.progress.start(sum(len(j.paths) for j in self.jobs.pending))
        self.progress.set_queued(n)

    def _progress(self, p: IndexProgress) -> None:
        self.progress.update_progress(p)  # vector counts come from Stats only (status bar and panel alike)
        if p.phase == "embed" and p.files_done >= p.files_total:
            # every file is read: the line names what is being done now, not the last file read minutes ago
            self.progress.current.setText(embedding_line(p))

    def _removed_path(self, path: str) -> bool:
        return inside_any(path, self._removed)

    def _done(self, summary: IndexSummary) -> None:
        if self._removed:  # a folder removed meanwhile: its problems and counts are no longer this run's
            summary = without_removed(summary, self._removed_path)
        self.progress.finish(summary)
        job = self.jobs.current
        if job is not None and job.kind == EMBED and not job.auto:
            if self._removed and not summary.chunks_embedded:
                title = f"Embedding stopped: {removed_names(self._removed)} removed from the index"
            elif self._removed:
                title = (f"Embedded {counted(summary.chunks_embedded, 'passage')}; "
                         f"{removed_names(self._removed)} removed from the index meanwhile")
            else:
                verb = "Re-embedded" if self._model_changed else "Embedded"
                title = f"{verb} {counted(summary.chunks_embedded, 'passage')}"
            self.progress.title.setText(title + (" (cancelled)" if summary.cancelled else ""))
            if not summary.cancelled:
                self._model_changed = False
        if summary.included_again:  # a drop or Include again named what the person had removed (issue 30)
            names = ", ".join(os.path.basename(p) or p for p in summary.included_again[:3])
            more = f" and {len(summary.included_again) - 3} more" if len(summary.included_again) > 3 else ""
            self.banners.show_message(f"Included again: {names}{more} (you had removed it from the library).",
                                      "info", key="included-again")
            self._included = list(summary.included_again)
        if summary.embed_error:
            self.banners.show_message(
                f"Files are keyword-searchable, but vectors could not be made: {summary.embed_error}",
                "warning", key="embed-error",
                actions=[("Retry embedding", self._reembed), ("Settings…", self._open_settings)])

    def _left_library(self, _n: int, paths: list[str]) -> None:
        """What the "Included again" banner names left the library again (it, or a folder holding it, was
        removed): the banner goes too, instead of naming what is no longer there."""
        if self._included and all(inside_any(i, paths) for i in self._included):
            self._included = []
            self.banners.dismiss("included-again")

    def _open_settings(self) -> None:
        self._settings()

    def _failed(self, exc: BaseException, tb: str) -> None:
        self.progress.fail(error_text(exc))
        self.error_banner(exc, tb)

    def error_banner(self, exc: BaseException, tb: str) -> None:
        if not isinstance(exc, UserError):
            log.error("background job failed:\n%s", tb)
        msg = error_text(exc)
        if isinstance(exc, StoreBusy):
            msg += (" Another program (or another copy of this app) is writing to the database; "
                    "try again when it is done.")
        self.banners.show_message(msg, "error", key="job-error")
