"""Index files in two phases.

1. **extract**: walk → skip unchanged (stat fast path, then content hash) → read → chunk → write the document,
   its chunks and FTS rows, several documents to ONE transaction (``write_batch.py``: ~1,000 chunks or ~1 s,
   whichever comes first). A document is keyword-searchable the moment its batch commits.
2. **embed**: drain the queue of chunks without vectors in batches, one transaction per batch. The queue is the
   ``embedded = 0`` flag in the database, so it survives a crash or kill: the next run embeds only what is missing.
   :func:`embed_queue` is that one loop: the service gives it leases that take the writer only to commit each
   slice (the model computes with no lock held), so other writes (a saved edit, a removal) take turns with it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path

import apsw
import numpy as np

from ..chunking import chunk_document
from ..chunking.dedupe import chunk_key, dedupe_within
from ..config import Settings
from ..embed.base import Embedder
from ..errors import Cancelled, EmbedderError, ExtractionError
from ..models import (
    STATUS_FAILED,
    STATUS_INDEXED,
    STATUS_SKIPPED,
    FileOutcome,
    IndexProgress,
    IndexSummary,
)
from ..paths import is_inside, normalise
from ..store.protocol import DocRow, DocumentWrite, LibraryStore
from .detect import kind_from_name
from .encoding import valid_text
from .hashing import hash_file
from .readers import read_document
from .walk import WalkEntry, gone_as_file, has_surrogates, printable_path, walk_paths
from .write_batch import WriteBatch

ProgressFn = Callable[[IndexProgress], None]
EMBED_WINDOW = 256  # chunks fetched per round and sorted by length, so batches of similar length pad little
WRITE_BATCH_CHUNKS = 1000  # chunks of extracted documents written in one transaction (ingest/write_batch.py)
WRITE_BATCH_S = 1.0  # ... or fewer, once the oldest of them waited this long: keyword-searchable within ~1 s
EMBED_SLICE = 16  # chunks embedded and committed together: progress, cancel and crash loss are per slice
# (16, not 64: Cancel stops in 1.0 s instead of 2.6 s p50 at load ~10; desktop_memory_bench/cancel_latency.py)
PROGRESS_INTERVAL_S = 0.1  # at most ~10 progress callbacks a second
SCAN_CHECK_EVERY = 64  # walked entries between progress reports / cancel checks during the scan
CHANGED_RETRIES = 3  # reads of a file that keeps changing under us before it is reported (and retried next run)
GONE_REASON = "file disappeared while indexing"
CHANGED_REASON = "file kept changing while being indexed; it is indexed again on the next run"


@dataclass
class _Reporter:
    """Throttles progress callbacks to ~10/s so a fast walk never floods the UI thread."""

    callback: ProgressFn | None
    started: float = field(default_factory=time.perf_counter)
    last: float = 0.0
    state: IndexProgress = field(default_factory=lambda: IndexProgress(phase="scan"))

    def emit(self, force: bool = False, **changes: object) -> None:
        for key, value in changes.items():
            setattr(self.state, key, value)
        now = time.perf_counter()
        self.state.elapsed_s = now - self.started
        if self.callback and (force or now - self.last >= PROGRESS_INTERVAL_S):
            self.last = now
            self.callback(IndexProgress(**vars(self.state)))


def _check(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled()


def index_paths(
    store: LibraryStore,
    paths: Iterable[str | Path],
    settings: Settings,
    embedder: Embedder | None,
    *,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
    force: bool = False,
    embed: bool = True,
    include_excluded: bool = False,
) -> IndexSummary:
    """Index files and folders; returns a summary with one outcome per file (and per skipped folder).

    What the person removed from inside a library folder (an exclusion) is left out, named or walked: a watcher's
    event, a catch-up or a re-read never brings it back. ``include_excluded`` (the person named these paths: the
    CLI's ``index``, a drop, "Include again") lifts the exclusion of a path named exactly; a path inside an
    excluded folder is still left out, with its reason."""
    with store.immediate_writes():  # another process's indexer makes us wait, not fail (see LibraryStore)
        summary = IndexSummary()
        named, excluded = _honour_exclusions(store, [normalise(p) for p in paths],
                                             include_excluded, summary)
        _index_paths(store, named, settings, embedder, progress=progress, cancel=cancel, force=force,
                     embed=embed, summary=summary, excluded=excluded)
        store.checkpoint_erased()  # a vanished or edited file's old text leaves the FTS index and the WAL too
    return summary


def _honour_exclusions(store: LibraryStore, named: list[str], include: bool,
                       summary: IndexSummary) -> tuple[list[str], list[str]]:
    """The named paths to index and the exclusions the walk leaves out (store/folders.py). With ``include``, a
    named path that is itself excluded is included again (said in ``summary.included_again``)."""
    excluded = store.excluded()
    if not excluded:
        return named, []
    if include:
        lifted = store.lift_exclusions([p for p in named if p in excluded])
        summary.included_again += lifted
        excluded = [x for x in excluded if x not in lifted]
    kept: list[str] = []
    for path in named:
        holder = next((x for x in excluded if is_inside(path, x)), None)
        if holder is None:
            kept.append(path)
        elif include:  # named inside a removed folder: the folder itself must be included again first
            summary.skipped += 1
            summary.outcomes.append(FileOutcome(path, STATUS_SKIPPED, f"inside {holder}, which was removed from "
                                                "the library; include that folder again to read it"))
        else:  # a watcher's event or a catch-up: the removal stays final
            summary.excluded.append(path)
    summary.excluded += [x for x in excluded if any(is_inside(x, r) and x != r for r in kept)]
    return kept, excluded


def _index_paths(store: LibraryStore, roots: list[str], settings: Settings, embedder: Embedder | None, *,
                 progress: ProgressFn | None, cancel: threading.Event | None, force: bool,
                 embed: bool, summary: IndexSummary, excluded: list[str]) -> IndexSummary:
    rep = _Reporter(progress)
    batch = WriteBatch(store, summary, max_chunks=WRITE_BATCH_CHUNKS, max_age_s=WRITE_BATCH_S)
    t0 = time.perf_counter()
    try:
        rep.emit(force=True, phase="scan")
        entries: list[WalkEntry] = []
        files_total = 0
        for entry in walk_paths(roots, settings.ingest, excluded):  # a big tree takes a while: report and honour Cancel
            entries.append(entry)
            files_total += not entry.is_dir
            if len(entries) % SCAN_CHECK_EVERY == 0:
                _check(cancel)
                rep.emit(files_total=files_total)
        _check(cancel)
        rep.emit(force=True, phase="extract", files_total=files_total)
        seen: set[str] = set()
        for walked in entries:
            _check(cancel)
            if batch.due() or batch.holds(walked.path):
                batch.flush()
            entry = walked
            if walked.skip_reason and has_surrogates(walked.path):  # a name that is not valid text: show it escaped
                entry = dataclasses.replace(walked, path=printable_path(walked.path))
            if entry.is_dir:
                summary.outcomes.append(FileOutcome(entry.path, STATUS_SKIPPED, entry.skip_reason or ""))
                summary.skipped += 1
                continue
            seen.add(entry.path)
            done = _index_one(store, entry, settings, force, summary)
            if isinstance(done, DocumentWrite):
                outcome = batch.add(done)  # its outcome's slot is filled in when its batch is written
            else:
                outcome = done
                summary.outcomes.append(outcome)
            rep.emit(files_done=rep.state.files_done + 1, current=entry.path, chunks_written=summary.chunks_added,
                     last_outcome=outcome)
        batch.flush()
        reconcile_kind_changes(store, roots, seen, summary)
        for root in roots:
            if os.path.isdir(root) and not has_surrogates(root):
                _remove_vanished(store, root, seen, summary)
                _add_library_folder(store, root)
        rep.emit(force=True)
        if embed and embedder is not None:
            embed_queue(held(store), held(store), embedder, reporter=rep, cancel=cancel, summary=summary,
                        keep_late_slice=True)
    except Cancelled:
        batch.flush()  # what was read before Cancel is kept
        summary.cancelled = True
    summary.elapsed_s = time.perf_counter() - t0
    rep.emit(force=True, phase="done")
    return summary


def _add_library_folder(store: LibraryStore, root: str) -> None:
    """A folder indexed inside a library folder is part of it, never a second, nested library folder (its sources
    stay named from the outer folder, and watching does not gain a folder); a folder that holds library folders
    takes their place."""
    existing = store.roots()
    if any(is_inside(root, r) for r in existing if r != root):
        return
    for inner in existing:
        if inner != root and is_inside(inner, root):
            store.remove_root(inner)
    store.add_root(root)


def _index_one(store: LibraryStore, entry: WalkEntry, settings: Settings, force: bool,
               summary: IndexSummary) -> FileOutcome | DocumentWrite:
    """The file's outcome when nothing is to be written for it (unchanged, skipped, failed), else the document to
    write: the caller's WriteBatch writes it with its neighbours (write_batch.py)."""
    path = entry.path
    if entry.skip_reason:
        store.record_outcome(path=path, status=STATUS_SKIPPED, error=entry.skip_reason, size=entry.size,
                             mtime=entry.mtime)
        summary.skipped += 1
        return FileOutcome(path, STATUS_SKIPPED, entry.skip_reason)
    existing = store.get_document(path)
    named = kind_from_name(path)
    if existing is not None and named is not None and existing.kind != named:
        # A reader for this kind arrived or changed (a .docx once skipped as binary, a .html once read as code):
        # read it again even though the file itself did not change.
        force = True
    if (not force and existing is not None and existing.size == entry.size and existing.mtime == entry.mtime
            and existing.status in (STATUS_INDEXED, STATUS_SKIPPED, STATUS_FAILED)):
        summary.unchanged += 1
        return FileOutcome(path, "unchanged", existing.error, existing.n_chunks)
    te = time.perf_counter()
    try:
        for _attempt in range(CHANGED_RETRIES):
            before = _fingerprint(path)
            digest = hash_file(path)
            if (not force and existing is not None and existing.status == STATUS_INDEXED
                    and existing.content_hash == digest):
                store.touch_document(existing.id, entry.size, entry.mtime)
                summary.unchanged += 1
                return FileOutcome(path, "unchanged", "", existing.n_chunks)
            doc = read_document(path, settings.ingest)
            # The hash stored must be the hash of the text indexed: if the file was rewritten while we read it,
            # read it again (a stale hash could later make a changed file look unchanged).
            if _fingerprint(path) == before and hash_file(path) == digest:
                break
        else:
            return _failed(store, entry, summary, CHANGED_REASON, remove=None)
        doc.text = valid_text(doc.text)  # e.g. a PDF font mapping to lone surrogates: SQLite could not store it
        doc.title = valid_text(doc.title) if doc.title else doc.title
        doc.warnings = [valid_text(w) for w in doc.warnings]
        chunks = chunk_document(doc, settings.chunking)
        chunks, _ = dedupe_within(chunks)
        keys = [chunk_key(c) for c in chunks]  # breadcrumb-free: same boilerplate under other headings matches
    except FileNotFoundError:
        return _failed(store, entry, summary, GONE_REASON, remove=existing)
    except PermissionError:
        return _failed(store, entry, summary, "permission denied", remove=None)
    except ExtractionError as exc:
        if exc.reason == GONE_REASON:  # deleted between the walk and the read: same as a vanished file
            return _failed(store, entry, summary, GONE_REASON, remove=existing)
        if exc.status == STATUS_SKIPPED:
            store.record_outcome(path=path, status=STATUS_SKIPPED, error=exc.reason, size=entry.size, mtime=entry.mtime,
                                 kind=kind_from_name(path) or "")
            summary.skipped += 1
            return FileOutcome(path, STATUS_SKIPPED, exc.reason)
        return _failed(store, entry, summary, exc.reason, remove=None)
    except OSError as exc:
        return _failed(store, entry, summary, f"cannot read file: {exc.strerror or exc}", remove=None)
    except Exception as exc:  # an unforeseen file (or a bug in a reader) costs that file, never the whole batch
        if isinstance(exc, apsw.Error):  # the database itself (disk full, read-only, busy): stop, say why
            raise
        reason = f"could not be indexed: unexpected {type(exc).__name__}: {valid_text(str(exc))[:200]}"
        return _failed(store, entry, summary, reason, remove=None)
    finally:
        summary.extract_s += time.perf_counter() - te
    return DocumentWrite(path=path, kind=doc.kind, language=doc.language, title=doc.title, size=entry.size,
                         mtime=entry.mtime, content_hash=digest, chunks=chunks, dedupe_keys=keys,
                         warning="; ".join(doc.warnings))


def _fingerprint(path: str) -> tuple[int, int, int, int, int]:
    """What changes when a file is rewritten, replaced or touched (ctime: even if the writer restores mtime)."""
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev


def _failed(
    store: LibraryStore, entry: WalkEntry, summary: IndexSummary, reason: str, *, remove: DocRow | None
) -> FileOutcome:
    if remove is not None:
        store.remove_documents([remove.id])
        summary.removed += 1
    else:
        store.record_outcome(path=entry.path, status=STATUS_FAILED, error=reason, size=entry.size, mtime=entry.mtime,
                             kind=kind_from_name(entry.path) or "")
    summary.failed += 1
    return FileOutcome(entry.path, STATUS_FAILED, reason)


def _remove_vanished(store: LibraryStore, root: str, seen: set[str], summary: IndexSummary) -> None:
    """Files that were indexed under this folder and are gone now leave the index."""
    gone = [d for d in store.documents_under(root) if d.path not in seen and gone_as_file(d.path)]
    if gone:
        store.remove_documents(d.id for d in gone)
        summary.removed += len(gone)
        summary.outcomes.extend(FileOutcome(d.path, "removed", "file no longer exists") for d in gone)


def reconcile_kind_changes(store: LibraryStore, roots: list[str], seen: set[str], summary: IndexSummary) -> None:
    """A path whose kind changed leaves the index in its old kind: a file now a folder (its old document goes;
    the files inside were just walked) and a folder now a file (the documents recorded under it go). Asked for
    every batch, so ``index``, the catch-up scan and the watcher (which index through here) all reconcile it.
    Cost: one lookup by path per distinct folder above a walked file, one range query per named path that is a
    file."""
    stale: dict[int, str] = {}
    folders: set[str] = set()
    for path in seen:
        parent = os.path.dirname(path)
        while parent not in folders and parent != os.path.dirname(parent):
            folders.add(parent)
            parent = os.path.dirname(parent)
    for folder in sorted(folders):
        doc = store.get_document(folder)
        if doc is not None and os.path.isdir(folder):
            stale[doc.id] = folder
    for root in roots:
        if os.path.isfile(root) and not has_surrogates(root):
            stale.update((d.id, d.path) for d in store.documents_under(root))
    if stale:
        store.remove_documents(stale)
        summary.removed += len(stale)
        summary.outcomes.extend(FileOutcome(p, "removed", "replaced by a folder or a file of the same name")
                                for p in sorted(stale.values()))


StoreLease = Callable[[], AbstractContextManager[LibraryStore]]  # a pooled reader, or the writer, for one block


def held(store: LibraryStore) -> StoreLease:
    """The lease of a LibraryStore the caller already holds (its writer, for one long transaction)."""
    return lambda: contextlib.nullcontext(store)


def embed_queue(read: StoreLease, write: StoreLease, embedder: Embedder, *,
                progress: ProgressFn | None = None, cancel: threading.Event | None = None,
                  summary: IndexSummary | None = None, reporter: _Reporter | None = None,
                  keep_late_slice: bool = False) -> int:
    """Embed every chunk still without a vector (the queue), committing each slice of ``EMBED_SLICE`` under
    ``write()``; errors stop the phase (recorded), never lose committed work. Returns how many were stored.

    The one embedding loop, under either lease: the service passes its reader pool and writer lock, so the
    model's minutes belong to no transaction and a watch batch, a removal or a read commits between two slices;
    an index run that holds the writer passes ``held(store)`` for both (one transaction around everything).
    Safe because a vector is stored only where the chunk still holds exactly the text embedded (a chunk edited or
    removed meanwhile gets none), and a slice made with a model that is no longer the index's (switched
    meanwhile) is dropped, never stored. A cancel seen after a slice was computed drops that slice too (after
    Cancel the vector count does not move), except with ``keep_late_slice`` (an index run's own embedding)."""
    summary = summary or IndexSummary()
    rep = reporter or _Reporter(progress)
    done = 0
    try:
        embedder.load()
        with write() as store:
            # another model or dimension than the index holds is refused here; a model that changes its dimension
            # later is refused by the embedder itself and by store_vectors (the shared embedder is never altered)
            store.ensure_model(embedder.model_id, embedder.dim)
        with read() as store:
            total = store.pending_count()
        rep.emit(force=True, phase="embed", chunks_to_embed=total, chunks_embedded=0)
        started = time.perf_counter()

        def queue_window(store: LibraryStore, after: int) -> list[tuple[int, str]]:
            return store.pending_chunks(EMBED_WINDOW, after_id=after)

        for ids, texts, vectors in embedded_slices(read, queue_window, embedder, cancel, summary):
            if not keep_late_slice:
                _check(cancel)
            ts = time.perf_counter()
            with write() as store:
                if store.model_info()[0] != embedder.model_id:
                    raise Cancelled()  # the model was switched meanwhile: these are not the index's vectors
                done += store.store_vectors(ids, vectors, texts=texts)
            summary.store_s += time.perf_counter() - ts
            elapsed = time.perf_counter() - started
            rate = done / elapsed if elapsed > 0 else 0.0
            rep.emit(chunks_embedded=done, chunks_per_s=rate,
                     eta_s=(max(0, total - done) / rate) if rate > 0 else None)
    except EmbedderError as exc:
        summary.embed_error = str(exc)
    finally:
        summary.chunks_embedded += done
    rep.emit(force=True)
    return done


def embedded_slices(read: StoreLease, fetch: Callable[[LibraryStore, int], list[tuple[int, str]]], embedder: Embedder,
                    cancel: threading.Event | None,
                    summary: IndexSummary) -> Iterator[tuple[list[int], list[str], np.ndarray]]:
    """The slices of an embedding (the queue, a model built beside): ``fetch`` windows of (chunk id, text) after
    an id on a leased reader, sort each by length (similar lengths pad little), embed it in slices of
    ``EMBED_SLICE`` and yield (ids, texts, vectors) for the caller to commit under the writer. A cancel seen
    before a slice's embedding ends the loop (Cancelled); one seen after it is the caller's to honour."""
    last_id = 0
    while True:
        _check(cancel)
        with read() as store:
            batch = fetch(store, last_id)
        if not batch:
            return
        last_id = batch[-1][0]
        batch.sort(key=lambda row: (len(row[1]), row[0]))
        for start in range(0, len(batch), EMBED_SLICE):
            _check(cancel)
            part = batch[start : start + EMBED_SLICE]
            texts = [text for _, text in part]
            te = time.perf_counter()
            vectors = embedder.embed_documents(texts)
            summary.embed_s += time.perf_counter() - te
            yield [cid for cid, _ in part], texts, vectors
