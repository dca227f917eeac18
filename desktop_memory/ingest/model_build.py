"""Build another model's vectors beside the active ones, then switch (issue 30: a model switch loses nothing).

The library's active set keeps answering every search (queries embedded with its own model) while this embeds,
slice by slice, each live passage that the new model's side set lacks (``store/model_sets.py``). Like
``embed_queue`` it holds the writer only to commit a slice, and a vector is stored only where the chunk
still holds exactly the text embedded. A cancel leaves the active set as it was and keeps the slices committed so
far (the next build goes on from there). When nothing is missing, one transaction makes the new set the active one
and keeps the old one beside it, so switching back is as quick.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..embed.base import Embedder
from ..errors import Cancelled, EmbedderError
from ..models import IndexProgress, IndexSummary
from ..store.protocol import LibraryStore
from .pipeline import EMBED_WINDOW, ProgressFn, StoreLease, embedded_slices

# (model id, dim, recorded settings) -> that model's embedder, or None when this computer cannot make it
EmbedderOf = Callable[[str, int, "str | None"], "Embedder | None"]


@dataclass(frozen=True)
class ModelView:
    """A library's models against the configured one, read once per search or stats call."""

    active: str | None  # the model of the set search uses (None: no vectors yet)
    configured: str  # the model the settings name
    search_embedder: Embedder | None  # embeds queries (and new passages) for the active set; None: unavailable
    building: bool  # the configured model's set is being built beside the active one
    note: str  # the mismatch in one plain sentence ("" when none)
    off_note: str = ""  # what to say instead when the library's own model does not answer

    def search_note(self, lane_off: str | None) -> str:
        """The note for one search: ``lane_off`` is why the semantic lane did not run (None: it ran)."""
        if lane_off is None or not self.off_note:
            return self.note
        return self.off_note.replace("not available here", f"not available here ({lane_off.rstrip('.')})", 1)

    @property
    def search_model(self) -> str | None:
        return self.active if self.search_embedder is not None else None


def model_view(store: LibraryStore, configured: Embedder, embedder_of: EmbedderOf) -> ModelView:
    """Which embedder serves this library's vectors, and what to tell the person when it is not the configured
    one. The embedder setting is global while vectors belong to each library: a library keeps searching by
    meaning with its own model wherever that model is available (the bundled local model always is)."""
    active, dim = store.model_info()
    wanted = configured.model_id
    if active is None or dim is None or active == wanted:
        return ModelView(active, wanted, configured, False, "")
    own = embedder_of(active, dim, store.models.settings_of(active))
    building = store.models.target() == wanted
    then = (f"the configured {wanted}'s vectors are being built beside them; search switches to them when they "
            "are complete" if building else
            f"the configured {wanted} has no vectors here yet — `desktop-memory embed` builds them")
    off = (f"semantic search is off: this library's vectors are from {active}, which is not available here, and "
           f"{then} (keyword search works meanwhile)")
    if own is not None:
        return ModelView(active, wanted, own, building, f"semantic search uses {active} (this library's vectors); "
                         + then, off)
    return ModelView(active, wanted, None, building, off, off)


def build_beside(read: StoreLease, write: StoreLease, embedder: Embedder, settings_json: str | None, *,
                 progress: ProgressFn | None = None, cancel: threading.Event | None = None,
                 summary: IndexSummary | None = None) -> bool:
    """Embed every passage ``embedder``'s side set lacks, then make that set the active one. Returns True when it
    switched. An embedder failure is recorded in ``summary.embed_error`` (nothing switched, nothing lost); a
    cancel raises :class:`Cancelled` after the last committed slice."""
    summary = summary if summary is not None else IndexSummary()
    model_id = embedder.model_id
    done = 0
    t0 = time.perf_counter()

    def emit(total: int, rate: float = 0.0) -> None:
        if progress is not None:
            progress(IndexProgress(phase="embed", chunks_to_embed=total, chunks_embedded=done, chunks_per_s=rate,
                                   eta_s=(max(0, total - done) / rate) if rate > 0 else None,
                                   elapsed_s=time.perf_counter() - t0, current=f"building {model_id} vectors"))

    try:
        embedder.load()
        with write() as store:
            if store.models.target() != model_id:
                return False  # the person chose another model meanwhile
            store.models.ensure_side(model_id, embedder.dim, settings_json)
        with read() as store:
            total = store.models.side_missing(model_id)
        emit(total)
        def side_window(store: LibraryStore, after: int) -> list[tuple[int, str]]:
            return store.models.side_pending(model_id, EMBED_WINDOW, after_id=after)

        for ids, texts, vectors in embedded_slices(read, side_window, embedder, cancel, summary):
            _check(cancel)  # a cancel that came while the slice was computed drops it
            with write() as store:
                if store.models.target() != model_id:
                    raise Cancelled()  # another model was chosen meanwhile: this build is over
                done += store.models.store_side(model_id, ids, vectors, texts)
            elapsed = time.perf_counter() - t0
            emit(total, done / elapsed if elapsed > 0 else 0.0)
        with write() as store:  # passages added meanwhile are found by the same query: complete means complete
            if store.models.target() != model_id or store.models.side_missing(model_id):
                return False
            store.models.activate(model_id)
        return True
    except EmbedderError as exc:
        summary.embed_error = str(exc)
        return False
    finally:
        summary.chunks_embedded += done


def _check(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled()


__all__ = ["build_beside"]
