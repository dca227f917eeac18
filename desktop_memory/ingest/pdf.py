"""PDF → ExtractedDoc through a sandboxed helper process (Word/ODF/RTF/slides/EPUB files use the same one).

Why a process: PDF parsers meet hostile input (fuzzed files, decompression bombs, endless content streams).
Running them in a child bounds each file in time (``pdf_timeout_s``: the child is killed) and memory
(``pdf_max_memory_mb``: RLIMIT_AS in the child, where the platform has it), and a segfault in PDFium or a hang in
pdfminer costs one file, not the app.

Why this shape: ONE persistent worker, started with the "spawn" context (never fork: the GUI has threads),
reused for every PDF (~1 ms per-file overhead instead of ~0.5 s start-up), restarted lazily after a timeout,
a crash or a memory error. Requests are serialised by a lock, so it is safe to call from any thread; create
more ``PdfExtractor`` objects for parallel extraction.

Packaging: in a frozen (PyInstaller) app the entry point must call ``multiprocessing.freeze_support()`` first
thing in ``main()``; spawn then re-launches the frozen executable as the worker.
"""

from __future__ import annotations

import atexit
import logging
import multiprocessing
import os
import re
import signal
import sys
import threading
import time
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..config import IngestSettings
from ..errors import ExtractionError
from ..models import DocHeading, ExtractedDoc
from . import pdf_worker
from .readers import check_file, open_checked

PAGE_SEPARATOR = "\n\f\n"
log = logging.getLogger(__name__)
START_TIMEOUT_S = 60.0  # first start imports pdfplumber + pypdfium2; not counted against a file's timeout
_POLL_S = 0.25
OCR_SHARE = 0.8  # OCR stops at this share of the time limit and keeps the pages it read
OCR_MIN_MEMORY_MB = 3072  # RapidOCR maps ~1.8 GB of address space (~700 MB resident) on a 144-dpi page


CORRUPT = "corrupt PDF: "
# A parser's own words for a damaged file ("Non-Ascii85 digit found: ±", "Invalid dictionary construct: [/'Water',
# 3…") → what it means for the person, in the Library and the summary. First match wins; the raw text goes to the log.
_PLAIN_CAUSES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"ascii85|asciihex|flate|lzw|ccitt|decod|zlib|inflate|stream", re.I),
     "a compressed part of the file is damaged, so its text cannot be read"),
    (re.compile(r"xref|trailer|startxref|cross.?reference", re.I),
     "its table of contents (cross-reference table) is damaged and could not be repaired"),
    (re.compile(r"\beof\b|end of file|truncat|unexpected end", re.I),
     "the file is cut short (an incomplete download or copy?)"),
    (re.compile(r"dictionary|PDFObjRef|object|token|syntax|keyword|literal|construct|parse", re.I),
     "its internal structure is damaged, so its text cannot be read"),
    (re.compile(r"data format error|not in pdf format|file not found or|failed to load", re.I),
     "no PDF reader can open it (damaged, or not really a PDF)"),
)
_PLAIN_ALREADY = re.compile(r"^(the |unreadable$|no pages|[a-z][a-z ,()0-9-]*$)")


def plain_reason(reason: str) -> str:
    """A failed PDF's reason in plain words: ``corrupt PDF: <a parser's message>`` becomes ``corrupt PDF: <what
    that means>``; reasons already written for people (ours, see pdf_worker and crash_reason) are kept."""
    if not reason.startswith(CORRUPT):
        return reason
    cause = reason[len(CORRUPT):]
    if _PLAIN_ALREADY.match(cause):
        return reason
    log.info("PDF parser said: %s", cause)
    plain = next((words for pattern, words in _PLAIN_CAUSES if pattern.search(cause)),
                 "its structure is damaged, so its text cannot be read")
    return CORRUPT + plain


def build_pdf_doc(reply: dict[str, Any]) -> ExtractedDoc:
    """Worker reply → ExtractedDoc (page texts joined with "\\n\\f\\n", 1-based page spans), or raise."""
    if not reply.get("ok"):
        raise ExtractionError(plain_reason(reply.get("reason") or "corrupt PDF: unreadable"),
                              status=reply.get("status", "failed"))
    parts: list[str] = []
    spans: list[tuple[int, int, int]] = []
    pos = 0
    for number, page_text in enumerate(reply["pages"], 1):
        if number > 1:
            pos += len(PAGE_SEPARATOR)
        spans.append((number, pos, pos + len(page_text)))
        parts.append(page_text)
        pos += len(page_text)
    headings = []
    for level, title, page, offset in reply.get("headings") or []:  # bookmarks: position markers on their page
        if 1 <= page <= len(spans):
            _, start, end = spans[page - 1]
            at = min(start + int(offset), end)
            headings.append(DocHeading(int(level), str(title), at, at))
    return ExtractedDoc(
        kind="pdf",
        text=PAGE_SEPARATOR.join(parts),
        pages=spans,
        title=reply.get("title"),
        warnings=list(reply.get("warnings") or []),
        headings=headings,
    )


def build_office_doc(reply: dict[str, Any]) -> ExtractedDoc:
    """Worker reply for a Word/ODF/RTF/slides/EPUB file → ExtractedDoc (see ``office/__init__``), or raise."""
    if not reply.get("ok"):
        raise ExtractionError(reply.get("reason") or "unreadable document", status=reply.get("status", "failed"))
    pages = reply.get("pages")
    return ExtractedDoc(
        kind=reply["kind"],
        text=reply["text"],
        pages=[(int(n), int(s), int(e)) for n, s, e in pages] if pages else None,
        title=reply.get("title"),
        warnings=list(reply.get("warnings") or []),
        headings=[DocHeading(int(lv), str(t), int(s), int(e)) for lv, t, s, e in reply.get("headings") or []],
    )


_WORDS = {"pdf": ("PDF extraction", "corrupt PDF: the PDF parser"),
          "document": ("reading the document", "corrupt document: the reader")}


def crash_reason(exitcode: int | None, max_memory_mb: int | None, what: str = "pdf") -> ExtractionError:
    """Turn a dead worker into an error a person can read."""
    doing, parser = _WORDS[what]
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        if max_memory_mb and name in ("SIGABRT", "SIGKILL"):
            # Under RLIMIT_AS a failed allocation in PDFium (C++) ends in abort(); a SIGKILL we did not send is
            # the kernel's OOM killer. Both are reported as memory; SIGSEGV/SIGBUS/SIGTRAP stay "crashed".
            return ExtractionError(f"{doing} needed more than {max_memory_mb} MB")
        return ExtractionError(f"{parser} crashed ({name})")
    return ExtractionError(f"{parser} stopped unexpectedly (exit code {exitcode})")


_START_LOCK = threading.Lock()


@contextmanager
def _without_main_module() -> Iterator[None]:
    """Hide ``__main__`` while starting the worker.

    "spawn" normally re-runs the parent's main module in the child. For the GUI that would import Qt into the
    PDF sandbox (slower start, a bigger address space under RLIMIT_AS), and a main read from stdin cannot be
    re-run at all. The worker needs nothing from ``__main__``, so we hand spawn a blank one. A frozen app is
    left alone: there the child is the executable itself, routed by ``multiprocessing.freeze_support()``.
    """
    if getattr(sys, "frozen", False):
        yield
        return
    with _START_LOCK:
        real = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            yield
        finally:
            if real is not None:
                sys.modules["__main__"] = real


class PdfExtractor:
    """Owns one sandbox process; see the module docstring."""

    def __init__(self, start_timeout_s: float = START_TIMEOUT_S) -> None:
        self._ctx = multiprocessing.get_context("spawn")
        self._proc: Any = None
        self._conn: Any = None
        self._lock = threading.Lock()
        self.start_timeout_s = start_timeout_s
        self.starts = 0  # how many worker processes were started (tests and diagnostics)

    # -- public --------------------------------------------------------------------------------------------

    def extract(
        self, path: str, *, timeout_s: float, max_memory_mb: int | None, engine: str = "auto", ocr: bool = False
    ) -> ExtractedDoc:
        request = {"op": "extract", "path": os.path.abspath(path), "engine": engine, "max_memory_mb": max_memory_mb,
                   "ocr": ocr, "ocr_budget_s": OCR_SHARE * timeout_s}
        return build_pdf_doc(self.request(request, timeout_s=timeout_s, max_memory_mb=max_memory_mb))

    def extract_document(self, path: str, ext: str, *, timeout_s: float, max_memory_mb: int | None) -> ExtractedDoc:
        """A Word/ODF/RTF/slides/EPUB file (``ext`` picks the reader), under the same bounds as a PDF."""
        request = {"op": "extract", "path": os.path.abspath(path), "format": ext, "max_memory_mb": max_memory_mb}
        reply = self.request(request, timeout_s=timeout_s, max_memory_mb=max_memory_mb, what="document")
        return build_office_doc(reply)

    def request(self, request: dict[str, Any], *, timeout_s: float, max_memory_mb: int | None = None,
                what: str = "pdf") -> dict[str, Any]:
        """Send one request and wait for the reply, killing the worker if it overruns or dies."""
        with self._lock:
            self._ensure_started()
            try:
                self._conn.send(request)
            except (OSError, ValueError):  # died since the last file: start again once
                self._kill()
                self._ensure_started()
                self._conn.send(request)
            return self._wait(timeout_s, max_memory_mb, what)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None and self._proc.is_alive() else None

    def close(self) -> None:
        """Stop the worker politely (then firmly). Safe to call twice."""
        with self._lock:
            if self._proc is None:
                return
            try:
                self._conn.send({"op": "exit"})
            except (OSError, ValueError):
                pass
            self._proc.join(2.0)
            self._kill()

    # -- internals -----------------------------------------------------------------------------------------

    def _ensure_started(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            return
        self._kill()
        parent, child = self._ctx.Pipe(duplex=True)
        proc = self._ctx.Process(
            target=pdf_worker.worker_main, args=(child, os.getpid()), name="desktop-memory-pdf", daemon=True
        )
        with _without_main_module():
            proc.start()
        child.close()  # so that the worker's death reads as EOF on our end
        self._proc, self._conn = proc, parent
        self.starts += 1
        try:
            ready = parent.poll(self.start_timeout_s)
            hello = parent.recv() if ready else None
        except (EOFError, OSError):
            hello = None
        if hello is None:
            self._kill()
            raise ExtractionError("the PDF helper process could not start")
        if not hello.get("ok"):
            raise ExtractionError(hello.get("reason") or "PDF support is not available")

    def _wait(self, timeout_s: float, max_memory_mb: int | None, what: str = "pdf") -> dict[str, Any]:
        deadline = time.monotonic() + max(0.0, timeout_s)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._kill()
                raise ExtractionError(f"{_WORDS[what][0]} took longer than {timeout_s:g} s")
            try:
                if self._conn.poll(min(remaining, _POLL_S)):
                    reply: dict[str, Any] = self._conn.recv()
                    if reply.get("restart"):
                        self._reap()
                    return reply
            except (EOFError, OSError):
                raise crash_reason(self._reap(), max_memory_mb, what) from None

    def _reap(self) -> int | None:
        """Wait for a dying worker and forget it; returns its exit code."""
        proc = self._proc
        if proc is None:
            return None
        proc.join(5.0)
        code: int | None = proc.exitcode
        self._kill()
        return code

    def _kill(self) -> None:
        proc, conn = self._proc, self._conn
        self._proc = self._conn = None
        if conn is not None:
            try:
                conn.close()
            except OSError:
                pass
        if proc is not None:
            if proc.is_alive():
                proc.kill()
                proc.join(5.0)
            try:
                proc.close()
            except ValueError:
                pass


class _Shared:
    """The process's one shared extractor (its worker is a child process), created on first use."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.extractor: PdfExtractor | None = None


_shared = _Shared()


def default_extractor() -> PdfExtractor:
    """The shared extractor used by ``extract_pdf`` (created on first use)."""
    with _shared.lock:
        if _shared.extractor is None:
            _shared.extractor = PdfExtractor()
        return _shared.extractor


def shutdown_pdf_worker() -> None:
    """Stop the shared worker (registered with atexit; the GUI may call it on quit)."""
    with _shared.lock:
        extractor, _shared.extractor = _shared.extractor, None
    if extractor is not None:
        extractor.close()


atexit.register(shutdown_pdf_worker)


def extract_pdf(path: str, settings: IngestSettings, *, extractor: PdfExtractor | None = None) -> ExtractedDoc:
    """Extract a PDF in the sandbox. Raises ExtractionError with a skipped/failed status and a plain reason."""
    check_file(path, settings)
    os.close(open_checked(path))  # permission problems are reported here, in words, not by the worker
    engine = settings.pdf_engine
    memory = settings.pdf_max_memory_mb
    if settings.ocr and memory:
        memory = max(memory, OCR_MIN_MEMORY_MB)
    return (extractor or default_extractor()).extract(
        path, timeout_s=settings.pdf_timeout_s, max_memory_mb=memory, engine=engine, ocr=settings.ocr
    )


def extract_document(path: str, settings: IngestSettings, *, extractor: PdfExtractor | None = None) -> ExtractedDoc:
    """Read a Word/ODF/RTF/slides/EPUB file in the sandbox (same time and memory bounds as a PDF)."""
    check_file(path, settings)
    os.close(open_checked(path))
    ext = os.path.splitext(path)[1].lower()
    return (extractor or default_extractor()).extract_document(
        path, ext, timeout_s=settings.pdf_timeout_s, max_memory_mb=settings.pdf_max_memory_mb
    )

