"""What the CLI prints: progress while it works (a bar on a terminal, a line every few seconds in a log or pipe),
the indexing summary and the library's numbers."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..models import IndexProgress, IndexSummary, Stats

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

LINE_EVERY_S = 5.0  # off a terminal: one progress line this often (and at each phase), never silence for minutes
EMPTY_LIBRARY = "the library is empty: add files with `desktop-memory index FOLDER` (or drop them on the app)"


def _describe(p: IndexProgress) -> tuple[float, str]:
    """(fraction done, words) for the current phase."""
    if p.phase == "embed":
        frac = p.chunks_embedded / max(p.chunks_to_embed, 1)
        eta = f" ETA {int(p.eta_s)}s" if p.eta_s is not None else ""
        return frac, f"embedding {p.chunks_embedded}/{p.chunks_to_embed} chunks ({p.chunks_per_s:.0f}/s){eta}"
    if p.phase == "extract":
        return (p.files_done / max(p.files_total, 1),
                f"reading {p.files_done}/{p.files_total} files · {p.chunks_written} chunks")
    if p.phase == "scan":
        return 0.0, f"looking for files: {p.files_total} so far"
    return _describe_upkeep(p)


def _describe_upkeep(p: IndexProgress) -> tuple[float, str]:
    """remove / check / compact (service.py): what they report while they run in the background."""
    took = f" ({p.elapsed_s:.0f} s)"
    if p.phase == "remove":
        return p.files_done / max(p.files_total, 1), f"removing {p.files_done:,}/{p.files_total:,} documents{took}"
    if p.phase == "copy":
        return p.files_done / max(p.files_total, 1), f"copying {p.files_done:,}/{p.files_total:,} documents{took}"
    if p.phase == "erase":
        return 1.0, f"erasing removed text from the full-text index{took}"
    if p.phase == "merge":
        return 0.0, f"compacting: merging the full-text index{took}"
    if p.phase == "compact":
        return p.files_done / 1000, f"compacting: about {p.files_done / 10:.0f} %{took}"
    if p.phase == "check":
        return (p.files_done / max(p.files_total, 1),
                f"checking {p.current} (step {p.files_done + 1} of {p.files_total}){took}")
    return 0.0, p.phase


class ProgressBar:
    """Progress on stderr: one updating line on a terminal. Off a terminal (a log, a pipe, cron) a run that lasts is
    never silent: after the first few seconds, a plain line at each phase and every few seconds (a short run, as in
    a script, prints only its result). Disabled entirely with ``enabled=False``."""

    def __init__(self, enabled: bool, *, clock: Callable[[], float] = time.monotonic,
                 every_s: float | None = None) -> None:
        self.enabled = enabled
        self.tty = sys.stderr.isatty()
        self._width = 0
        self._clock = clock
        self._every_s = LINE_EVERY_S if every_s is None else every_s
        self._last_line = clock()  # the first line comes one interval after the start
        self._phase = ""
        self._quiet_so_far = True

    def __call__(self, p: IndexProgress) -> None:
        if not self.enabled or p.phase == "done":
            return
        frac, text = _describe(p)
        if not self.tty:
            now = self._clock()
            new_phase, self._phase = p.phase != self._phase, p.phase
            if now - self._last_line >= self._every_s or (new_phase and not self._quiet_so_far):
                self._last_line, self._quiet_so_far = now, False
                sys.stderr.write(f"{time.strftime('%H:%M:%S')} {text}\n")
                sys.stderr.flush()
            return
        bar = "#" * int(frac * 24)
        line = f"\r[{bar:<24}] {text}"
        pad = max(0, self._width - len(line))
        self._width = len(line)
        sys.stderr.write(line + " " * pad)
        sys.stderr.flush()

    def finish(self) -> None:
        if self.enabled and self.tty and self._width:
            sys.stderr.write("\r" + " " * self._width + "\r")
            sys.stderr.flush()


def print_summary(summary: IndexSummary, out: SupportsWrite[str] = sys.stdout) -> None:
    print(
        f"indexed {summary.indexed}, unchanged {summary.unchanged}, skipped {summary.skipped}, "
        f"failed {summary.failed}, removed {summary.removed} · {summary.chunks_added} chunks added, "
        f"{summary.chunks_embedded} embedded"
        + (f" ({summary.vectors_reused} unchanged kept their vectors)" if summary.vectors_reused else "")
        + f", {summary.duplicates_collapsed} duplicates collapsed "
        f"· {summary.elapsed_s:.1f}s",
        file=out,
    )
    for path in summary.included_again:
        print(f"included again: {path} (you had removed it from the library; naming it brings it back)", file=out)
    if summary.excluded:
        print(f"left out {len(summary.excluded)} path(s) removed from the library earlier "
              "(`desktop-memory list --status excluded`; `desktop-memory include PATH` brings one back)", file=out)
    if summary.cancelled:
        print("cancelled: everything committed so far is kept; run again to finish.", file=out)
    # an embed_error is said by the command on stderr, with exit code 3 (subcommands._embedding_stopped)
    for o in summary.outcomes:
        if o.status == "failed":
            print(f"  failed  {o.path}: {o.reason}", file=out)
    skipped = [o for o in summary.outcomes if o.status == "skipped"]
    for o in skipped[:50]:
        print(f"  skipped {o.path}: {o.reason}", file=out)
    if len(skipped) > 50:
        print(f"  … and {len(skipped) - 50} more skipped (see `desktop-memory list --status skipped`)", file=out)


def chunk_breakdown(st: Stats) -> str:
    """Why chunks and vectors differ: a collapsed duplicate shares its twin's vector; a waiting chunk has not been
    embedded yet (or its embedding failed; `embed` retries it)."""
    parts = [f"{st.vectors:,} with a vector"]
    if st.duplicates:
        parts.append(f"{st.duplicates:,} duplicate(s) sharing another passage's vector")
    parts.append(f"{st.pending_vectors:,} waiting for a vector")
    other = st.chunks - st.vectors - st.duplicates - st.pending_vectors
    if other > 0:
        parts.append(f"{other:,} without a vector for another reason (`desktop-memory check` looks)")
    return ", ".join(parts)


def print_stats(st: Stats) -> None:
    docs = ", ".join(f"{k} {v}" for k, v in sorted(st.documents.items())) or "none"
    print(f"database   {st.db_path} ({st.db_bytes / 1e6:.1f} MB)")
    print(f"documents  {docs}")
    print(f"chunks     {st.chunks:,} ({chunk_breakdown(st)})")
    print(f"vectors    {st.vectors:,} ({st.pending_vectors:,} waiting)")
    print(f"model      {st.model_id or '-'}" + (f" ({st.dim}-d)" if st.dim else "")
          + (f", configured {st.configured_model}" if st.configured_model and st.configured_model != st.model_id
             else ""))
    for m in st.models:  # every model whose vectors the library holds (issue 30: a switch keeps the old ones)
        role = "search uses these" if m.active and st.search_model == m.model_id else \
            "search cannot use these here" if m.active else "kept"
        missing = f", {m.missing:,} passages without" if m.missing and not m.active else ""
        print(f"  vectors of {m.model_id} ({m.dim}-d): {m.vectors:,}{missing}, about {m.bytes / 1e6:.1f} MB "
              f"({role})")
    if st.model_note:
        print(f"note: {st.model_note}", file=sys.stderr)
    if any(not m.active for m in st.models):
        print("note: another model's vectors are kept for switching back at once; `desktop-memory embedder --drop "
              "MODEL` deletes them and `desktop-memory compact` gives the space back", file=sys.stderr)
    if st.excluded:
        print(f"excluded   {len(st.excluded):,} path(s) removed from inside library folders (kept out of watching and "
              "re-reading; `desktop-memory list --status excluded`, `desktop-memory include PATH`)")
    if st.removing_documents:
        print(f"removing   {st.removing_documents:,} document(s) of {', '.join(st.removing)} still to remove (counted "
              "above; an interrupted removal: not searchable, and any command that writes, e.g. `desktop-memory "
              "compact`, the window or `watch`, finishes it)")
    if st.pending_vectors:
        print("note: chunks waiting for a vector are found by keyword search; `desktop-memory embed` embeds them "
              "(and retries any whose embedding failed)", file=sys.stderr)
    if not st.documents:
        print(f"note: {EMPTY_LIBRARY}", file=sys.stderr)
