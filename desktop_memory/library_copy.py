"""``desktop-memory copy --from A --to B``: move a library between stores (a SQLite file, a PostgreSQL database)
without re-reading a file or re-embedding a passage.

Over the stores' public methods only (``Store.export`` reads; ``write_documents``, ``store_vectors``,
``models.store_side``, ``add_root``, ``add_exclusions`` write), so any pair of stores works. Folders (with their
machine) and exclusions first, then documents in slices of ``SLICE`` — one transaction per slice for their chunks,
then that slice's vectors of every model set — so an interruption loses at most one slice and a second run goes on
where the first stopped: a document already in the target with the same content hash and passage count is not
written again, and only its passages still without a vector get one. A non-empty target whose model differs is
refused unless the person says so (``allow_other_model``): the copied vectors would then sit beside the target's
as another model's set, not be searched.

The source is read a slice or two ahead on a thread of its own (library_copy_reader.py) and each slice is handed to
the target as what it writes next (``prepare_writes``: a server library tokenizes it meanwhile), so reading,
tokenizing and writing overlap; the target is written only from the copy's thread.
"""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import Cancelled, UserError
from .library_copy_reader import SliceReader, SourceSlice, vector_source
from .library_location import Location, shown
from .library_open import open_library, records_machines
from .models import STATUS_INDEXED
from .store.open import store_error
from .store.protocol import ExportChunk, LibraryStore
from .store.row_types import WriteResult

SLICE = 200  # documents per transaction: ~2,000 passages, well under a second on either store
PREPARED_AHEAD = 2  # slices handed to the target before the one it writes (a server tokenizes two at once)
CopyProgress = Callable[[int, int], None]  # (documents done, documents in the source)


@dataclass
class CopySummary:
    documents: int = 0  # written to the target in this run
    unchanged: int = 0  # already there with the same content (an earlier, interrupted run)
    outcomes: int = 0  # skipped/failed files, recorded as they were
    chunks: int = 0
    vectors: dict[str, int] = field(default_factory=dict)  # model id → vectors written
    folders: int = 0
    exclusions: int = 0
    model: str | None = None  # the source's active model

    def to_dict(self) -> dict[str, object]:
        return {"documents": self.documents, "unchanged": self.unchanged, "outcomes": self.outcomes,
                "chunks": self.chunks, "vectors": dict(self.vectors), "folders": self.folders,
                "exclusions": self.exclusions, "model": self.model}


def _same(a: Location, b: Location) -> bool:
    if isinstance(a, Path) and isinstance(b, Path):
        return a.expanduser().resolve() == b.expanduser().resolve()
    return str(a) == str(b)


@contextlib.contextmanager
def _plain(location: Location) -> Iterator[None]:
    """A store's own errors (disk full, locked, not ours) as its one-sentence StoreError."""
    try:
        yield
    except Exception as exc:  # SQLite's, or a server library's driver error (psycopg is imported only for one)
        found = store_error(exc, location)
        if found is None:
            raise
        raise found from exc


def check_locations(source: Location, target: Location) -> None:
    """Refuse a copy onto itself, or from something that is not a library it can read, before the target is
    opened or created (the source is opened and closed once more for it: milliseconds)."""
    if _same(source, target):
        raise UserError(f"--from and --to name the same library ({shown(source)}): nothing to copy.")
    if isinstance(source, Path) and not source.is_file():
        raise UserError(f"no library at {source}: --from names the library to copy.")
    with _plain(source):
        open_library(source, readonly=True).close()  # not a library, a newer one, a server refusing: said here


def copy_into(source: Location, dst: LibraryStore, target: Location, *, machine: tuple[str, str],
              allow_other_model: bool = False, progress: CopyProgress | None = None,
              cancel: threading.Event | None = None, slice_size: int = SLICE) -> CopySummary:
    """Copy ``source`` into the open library ``dst`` (at ``target``); see the module doc. ``machine``: the copying
    machine, whose folders are the source's unrecorded ones ('' id) when the target records machines. Run by the
    target's scheduler as a job (library_copy_job.py), holding its writer: each slice is its own transaction.
    The locations were checked (``check_locations``) before the target was opened."""
    with _plain(source):
        src = open_library(source, readonly=True)
    try:
        with _plain(target):
            return _copy(src, dst, source, target, machine, allow_other_model, progress, cancel, slice_size)
    finally:
        src.close()


def _copy(src: LibraryStore, dst: LibraryStore, source: Location, target: Location, machine: tuple[str, str],
          allow_other_model: bool, progress: CopyProgress | None, cancel: threading.Event | None,
          slice_size: int) -> CopySummary:
    summary = CopySummary()
    src_model, src_dim = src.model_info()
    summary.model = src_model
    sets = [(s.model_id, s.dim, src.models.settings_of(s.model_id)) for s in src.models.sets()]
    if src_model is not None and src_dim is not None and all(m != src_model for m, _, _ in sets):
        sets.insert(0, (src_model, src_dim, None))  # an older library: its model not in the registry yet
    _prepare_models(dst, target, src_model, src_dim, sets, allow_other_model)
    dst_model = dst.model_info()[0]
    # folders (each with its machine) and exclusions: tiny, and what the target's watchers follow
    stamp = records_machines(target)
    for path, mid, name in src.root_machines():
        dst.add_root(path, machine=(mid, name) if mid or not stamp else machine)
        summary.folders += 1
    excluded = src.exclusion_rows()
    dst.add_exclusions(excluded)
    summary.exclusions = len(excluded)
    removing = src.pending_removals()  # an interrupted removal in the source: its documents are not copied
    in_source = src.counts()
    total = sum(in_source["by_status"].values())
    # an empty target (a first copy) holds none of the documents: no lookup per document for a resumed copy
    in_target = dst.counts()  # (one count: on a server library of a million passages it scans them)
    fresh = not sum(in_target["by_status"].values())
    done = 0
    reader = SliceReader(src, [m for m, _, _ in sets], removing, slice_size, active=dst_model).start()
    try:
        # a server library builds its indexes once, at the end (all of them when the copy is large for it)
        # what the copy brings: the whole source into an empty library, what the target lacks of it when run again
        # (a copy run again over a finished one must not drop and rebuild a million vectors' graph for none)
        with dst.bulk_load(incoming=max(0, in_source["chunks"] - int(in_target["chunks"]))):
            slices = iter(reader)
            queued: deque[SourceSlice] = deque()
            failed: BaseException | None = None  # a read that failed: raised once the slices before it are written
            while True:
                while failed is None and len(queued) <= PREPARED_AHEAD:  # read meanwhile; the target may start
                    try:
                        plan = _next_slice(slices, dst, fresh)
                    except Exception as exc:  # (the reader's, raised here: the source's errors)
                        failed = exc
                        break
                    if plan is None:
                        break
                    queued.append(plan)
                if not queued:
                    if failed is not None:
                        raise failed
                    break
                if cancel is not None and cancel.is_set():
                    raise Cancelled(f"copy stopped after {done:,} of {total:,} documents; run it again to go on")
                pending = queued.popleft()
                _write_slice(dst, pending, sets, dst_model, summary)
                done += pending.read
                if progress is not None:
                    progress(done, total)
    finally:
        reader.close()
    return summary


def _prepare_models(dst: LibraryStore, target: Location, src_model: str | None, src_dim: int | None,
                    sets: Sequence[tuple[str, int, str | None]], allow_other_model: bool) -> None:
    """The target's active model: the source's when the target has none; a different one is refused on a target
    that holds documents unless allowed. Every other source set gets its side set in the target."""
    dst_model, _ = dst.model_info()
    if src_model is not None and src_dim is not None:
        if dst_model is None:
            dst.ensure_model(src_model, src_dim)
            dst.models.record_active(next((s for m, _, s in sets if m == src_model), None))
            dst_model = src_model
        elif dst_model != src_model and sum(dst.counts()["by_status"].values()) and not allow_other_model:
            raise UserError(f"{shown(target)} already holds a library made with {dst_model}, and this one is made "
                            f"with {src_model}: copy into an empty library, or add --allow-other-model to keep "
                            f"{src_model}'s vectors beside it (search there goes on using {dst_model}).")
    for model_id, dim, settings in sets:
        if model_id != dst_model:
            dst.models.ensure_side(model_id, dim, settings)


def _next_slice(slices: Iterator[SourceSlice], dst: LibraryStore, fresh: bool) -> SourceSlice | None:
    """The next slice read from the source, less the documents the target already holds with the same content
    and passage count (an earlier, interrupted run; not looked up in a first copy), handed to the target as the
    documents it writes next."""
    plan = next(slices, None)
    if plan is None:
        return None
    if not fresh:
        kept = []
        for write in plan.writes:
            there = dst.get_document(write.path)
            if there is not None and there.content_hash == write.content_hash and \
                    there.n_chunks == len(write.chunks) and there.status == STATUS_INDEXED:
                plan.unchanged += 1
            else:
                kept.append(write)
        plan.writes = kept
    dst.prepare_writes(plan.writes)
    return plan


def _write_slice(dst: LibraryStore, plan: SourceSlice, sets: Sequence[tuple[str, int, str | None]],
                 dst_model: str | None, summary: CopySummary) -> None:
    for doc in plan.outcomes:
        dst.record_outcome(path=doc.path, status=doc.status, error=doc.error, kind=doc.kind, size=doc.size,
                           mtime=doc.mtime)
    summary.outcomes += len(plan.outcomes)
    summary.unchanged += plan.unchanged
    written: dict[str, WriteResult] = {}  # path → what the target wrote, for the documents written here
    if plan.writes:
        results = dst.write_documents(plan.writes)  # with the active model's vectors they carry
        written = {w.path: r for w, r in zip(plan.writes, results, strict=True)}
        summary.documents += len(plan.writes)
        summary.chunks += sum(len(w.chunks) for w in plan.writes)
        if dst_model is not None:
            summary.vectors[dst_model] = summary.vectors.get(dst_model, 0) + sum(r.vectors_stored for r in results)
    _copy_vectors(dst, plan, sets, dst_model, summary, written)


def _copy_vectors(dst: LibraryStore, plan: SourceSlice, sets: Sequence[tuple[str, int, str | None]],
                  dst_model: str | None, summary: CopySummary, written: dict[str, WriteResult]) -> None:
    """Each target passage still without a vector gets the source's vector of the same passage (a duplicate's is
    its holder's when their texts are the same; read with the slice), for every model the source holds.
    ``written``: what this slice wrote (the other documents are looked up). The target's passages are read back
    only for another model's set, a document written earlier, or one whose write left a passage without its
    vector (a copy in the source, the holder of its passage in the target): a first copy of a one-model library
    reads nothing back."""
    side = any(model_id != dst_model for model_id, _, _ in sets)
    docs = [d for d in plan.indexed if side or d.path not in written or _left_unembedded(written[d.path])]
    chunks = plan.chunks
    pairs: list[tuple[ExportChunk, int]] = []  # (target chunk, the source chunk whose vector it takes)
    targets: dict[int, int | None] = {}
    for d in docs:
        there = written[d.path].doc_id if d.path in written else None
        if there is None:
            row = dst.get_document(d.path)
            there = None if row is None else row.id
        targets[d.id] = there
    dst_chunks = dst.export.chunks([t for t in targets.values() if t is not None])
    for doc in docs:
        there = targets[doc.id]
        if there is None:
            continue
        for theirs, mine in zip(chunks.get(doc.id, []), dst_chunks.get(there, []), strict=False):
            source = vector_source(theirs, plan.same_text)
            if mine.dup_of is None and source is not None:
                pairs.append((mine, source))
    if not pairs:
        return
    for model_id, _, _ in sets:
        active = model_id == dst_model
        todo = [(t, s) for t, s in pairs if not t.embedded] if active else pairs
        found = plan.vectors.get(model_id, {})
        todo = [(t, s) for t, s in todo if s in found]
        if not todo:
            continue
        ids = [t.id for t, _ in todo]
        matrix = np.stack([found[s] for _, s in todo])
        texts = [t.text for t, _ in todo]
        stored = dst.store_vectors(ids, matrix, texts) if active else dst.models.store_side(model_id, ids, matrix,
                                                                                         texts)
        summary.vectors[model_id] = summary.vectors.get(model_id, 0) + stored


def _left_unembedded(result: WriteResult) -> bool:
    """Whether a write left one of its canonical passages without a vector of the active model."""
    return result.chunks - result.duplicates > result.vectors_reused + result.vectors_stored
