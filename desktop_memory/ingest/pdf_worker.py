"""PDF text extraction that runs inside the sandbox process (see ``pdf.py`` for the parent side).

The same process reads the zip-based document formats (``office/``: docx, pptx, odt, odp, epub) and RTF, so a
hostile document is bounded exactly like a hostile PDF.

Engines: pypdfium2 first (PDFium, C++: ~100x faster than pdfminer and keeps multi-column reading order), then
pdfplumber (pdfminer.six, pure Python) as the fallback when PDFium cannot open a file or finds no text at all,
or as the only engine when asked. Everything here returns plain dicts so results cross the process pipe cheaply.

Result dicts:  {"ok": True, "pages": [str, ...], "title": str | None, "engine": str, "warnings": [str]}
               {"ok": False, "status": "skipped" | "failed", "reason": str}
"""

from __future__ import annotations

import importlib
import os
import re
import sys
import threading
import time
import unicodedata
from typing import Any

from .ocr import ENABLE_HINT, INSTALL_HINT, NOTHING_FOUND, ocr_available, ocr_pages
from .pdf_clean import clean_pages, place_headings

ENGINES = ("auto", "pdfium", "pdfplumber")
ENCRYPTED_REASON = "password-protected PDF (encrypted); remove the password to index it"
NO_TEXT_REASON = INSTALL_HINT  # a scan, without the OCR extra (with it: see ``scanned_reason``)
BLANK_REASON = "no text found: every page is blank"

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # keeps \t and \n; \f (our page separator) goes
_TRAILING_WS = re.compile(r"[ \t\u00a0]+\n")
_MANY_BLANK_LINES = re.compile(r"\n{3,}")
_OOM_TEXT = re.compile(r"unable to allocate|cannot allocate|out of memory", re.IGNORECASE)
_FPDF_ERR_PASSWORD = 4
_FPDF_ERR_SECURITY = 6


# -- text clean-up -------------------------------------------------------------------------------------------


def clean_page_text(raw: str) -> str:
    """Normalise one page's text: LF newlines, soft-hyphen joins undone, no control chars, NFKC (ligatures).

    The result never contains "\\f", so "\\n\\f\\n" stays an unambiguous page separator.
    """
    s = raw.replace("\r\n", "\n").replace("\r", "\n")
    s = s.replace("\ufffe", "").replace("\x02", "")  # PDFium marks a hyphen that joins a word across lines
    s = s.replace("\f", "\n").replace("\v", "\n")
    s = _CONTROL.sub("", s)
    s = unicodedata.normalize("NFKC", s)
    s = _TRAILING_WS.sub("\n", s)
    s = _MANY_BLANK_LINES.sub("\n\n", s)
    return s.strip()


_WORD_PREFIX = re.compile(r"^Microsoft (?:Word|PowerPoint|Excel) - ", re.IGNORECASE)
_FILE_NAME_TITLE = re.compile(r"^[\w\-. ()]+\.(?:pdf|exe|docx?|rtf|txt|indd|qxd|tmp|pptx?|xlsx?|odt|tex|dvi|ps)$",
                              re.IGNORECASE)


def _clean_title(value: Any) -> str | None:
    """The metadata title, unless it is a producer's placeholder such as "Binder1.pdf" or "Microsoft Word - x.doc"."""
    if not isinstance(value, str):
        return None
    title = " ".join(value.replace("\x00", " ").split())
    title = _WORD_PREFIX.sub("", title)
    if not title or _FILE_NAME_TITLE.match(title):
        return None
    return title


def _short(exc: BaseException) -> str:
    """A one-line cause for 'corrupt PDF: <cause>' (no tracebacks, no huge reprs)."""
    inner = exc.args[0] if isinstance(exc.args, tuple) and len(exc.args) == 1 else None
    if isinstance(inner, BaseException):  # pdfplumber wraps pdfminer errors
        exc = inner
    text = " ".join(str(exc).split()) or type(exc).__name__
    text = text.replace("Failed to load document (PDFium: ", "").rstrip(").").rstrip()
    return text[:160]


def is_memory_error(exc: BaseException) -> bool:
    """True for MemoryError, also when a library wrapped it (pdfplumber wraps pdfminer errors in its own) or
    re-raised it as text ("Unable to allocate output buffer" from zlib inside pdfminer)."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, MemoryError) or _OOM_TEXT.search(str(e)):
            return True
        todo += [a for a in getattr(e, "args", ()) if isinstance(a, BaseException)]
        todo += [x for x in (e.__cause__, e.__context__) if x is not None]
    return False


def describe_pages(numbers: list[int]) -> str:
    """[3, 7, 8, 9] → "3, 7–9"."""
    parts: list[str] = []
    start: int | None = None
    prev = 0
    for n in numbers:
        if start is None:
            start = prev = n
        elif n == prev + 1:
            prev = n
        else:
            parts.append(str(start) if start == prev else f"{start}–{prev}")
            start = prev = n
    if start is not None:
        parts.append(str(start) if start == prev else f"{start}–{prev}")
    return ", ".join(parts)


# -- engines -------------------------------------------------------------------------------------------------


class _Attempt:
    """What one engine found: pages (maybe empty strings), or why it could not open the file."""

    def __init__(self) -> None:
        self.pages: list[str] | None = None
        self.title: str | None = None
        self.error: str | None = None
        self.encrypted = False
        self.objects = 0  # PDFium: page objects seen (images, paths, text), tells scanned from broken
        self.outline: list[tuple[int, str, int]] = []  # PDFium: bookmarks (0-based level, title, 0-based page)
        # pdfplumber: the file opened only after Ghostscript rewrote it; the original parse error is kept here.
        # A "repaired" file whose pages come out empty is damaged, not blank.
        self.repaired_from: str | None = None

    @property
    def has_text(self) -> bool:
        return any(p for p in self.pages or [])


def _pdfium(path: str) -> _Attempt:
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    a = _Attempt()
    try:
        doc = pdfium.PdfDocument(path)
    except pdfium.PdfiumError as exc:
        code = getattr(exc, "err_code", None)
        a.encrypted = code in (_FPDF_ERR_PASSWORD, _FPDF_ERR_SECURITY) or "password" in str(exc).lower()
        a.error = _short(exc)
        return a
    try:
        a.title = _clean_title(doc.get_metadata_dict().get("Title"))
        pages: list[str] = []
        for i in range(len(doc)):
            page = doc[i]
            try:
                a.objects += pdfium_c.FPDFPage_CountObjects(page.raw)
                textpage = page.get_textpage()
                try:
                    pages.append(clean_page_text(textpage.get_text_range()))
                finally:
                    textpage.close()
            finally:
                page.close()
        a.pages = pages
        a.outline = _outline(doc)
    except Exception as exc:  # a page that breaks PDFium: let pdfplumber try the whole file
        if is_memory_error(exc):
            raise MemoryError from exc
        a.error = _short(exc)
        a.pages = None
    finally:
        doc.close()
    return a


MAX_BOOKMARKS = 5000


def _outline(doc: Any) -> list[tuple[int, str, int]]:
    """The document's bookmarks that point at a page (a broken outline is ignored, never fatal)."""
    out: list[tuple[int, str, int]] = []
    try:
        for item in doc.get_toc(max_depth=4):
            dest = item.get_dest()
            index = dest.get_index() if dest is not None else None
            title = item.get_title()
            if index is not None and title:
                out.append((item.level, title, index))
            if len(out) >= MAX_BOOKMARKS:
                break
    except Exception:  # an outline is a bonus: a cyclic or damaged one must not cost the text
        return out
    return out


def _plumber_open(path: str, attempt: _Attempt) -> Any:
    import pdfplumber

    try:
        return pdfplumber.open(path)
    except Exception as first:
        if _is_password_error(first):
            raise
        try:  # malformed files: pdfplumber can rewrite them through Ghostscript first (needs `gs`)
            pdf = pdfplumber.open(path, repair=True)
        except Exception:
            raise first from None
        attempt.repaired_from = _short(first)
        return pdf


def _is_password_error(exc: BaseException) -> bool:
    seen = [exc, *(a for a in getattr(exc, "args", ()) if isinstance(a, BaseException))]
    return any(type(e).__name__ in ("PDFPasswordIncorrect", "PDFEncryptionError") for e in seen)


def _plumber(path: str) -> _Attempt:
    a = _Attempt()
    try:
        pdf = _plumber_open(path, a)
    except Exception as exc:
        if is_memory_error(exc):
            raise MemoryError from exc
        a.encrypted = _is_password_error(exc)
        a.error = _short(exc)
        return a
    try:
        meta = pdf.metadata or {}
        a.title = _clean_title(meta.get("Title"))
        pages: list[str] = []
        for page in pdf.pages:
            # x_tolerance 1.5 keeps word gaps in tightly set text; text flow keeps columns apart.
            pages.append(clean_page_text(page.extract_text(x_tolerance=1.5, use_text_flow=True) or ""))
            a.objects += sum(len(v) for v in page.objects.values())
            page.close()
        a.pages = pages
    except Exception as exc:
        if is_memory_error(exc):
            raise MemoryError from exc
        a.error = _short(exc)
        a.pages = None
    finally:
        pdf.close()
    return a


def scanned_reason(ocr: bool) -> str:
    """Why a scan is skipped: the extra is missing, or installed but OCR is switched off."""
    return ENABLE_HINT if ocr_available() and not ocr else INSTALL_HINT


def extract(path: str, engine: str = "auto", *, ocr: bool = False, deadline: float | None = None) -> dict[str, Any]:
    """Extract page texts with the chosen engine ("auto": PDFium, then pdfplumber when PDFium finds nothing).

    ``ocr`` (and the extra installed): image-only pages are read by OCR until ``deadline`` (time.monotonic()).
    """
    if engine not in ENGINES:
        raise ValueError(f"unknown PDF engine {engine!r}")
    use_ocr = ocr and ocr_available()
    first = _pdfium(path) if engine in ("auto", "pdfium") else None
    if first is not None and first.encrypted:
        return _fail(ENCRYPTED_REASON, "skipped")
    if first is not None and first.has_text:
        return _ok(first, "pdfium", path if use_ocr else None, deadline)
    second = _plumber(path) if engine in ("auto", "pdfplumber") else None
    if second is not None and second.encrypted:
        return _fail(ENCRYPTED_REASON, "skipped")
    if second is not None and second.has_text:
        return _ok(second, "pdfplumber", path if use_ocr else None, deadline)
    outcome = _no_text_outcome(first, second)
    if outcome.get("reason") != NO_TEXT_REASON:
        return outcome
    scan = next((a for a in (first, second) if a is not None and a.pages), None)
    if not use_ocr or scan is None:
        return _fail(scanned_reason(ocr), "skipped")
    result = _ok(scan, "ocr", path, deadline)
    if not any(result["pages"]):
        return _fail(NOTHING_FOUND, "skipped")
    return result


def _no_text_outcome(first: _Attempt | None, second: _Attempt | None) -> dict[str, Any]:
    """Neither engine found text: a scan (pages draw something), blank pages, or a file nobody can parse."""
    attempts = [a for a in (first, second) if a is not None]
    opened = [a for a in attempts if a.pages is not None]
    if any(a.pages and a.objects > 0 for a in opened):
        return _fail(NO_TEXT_REASON, "skipped")
    failed = [a for a in attempts if a.pages is None]
    repaired = next((a.repaired_from for a in attempts if a.repaired_from), None)
    if repaired and not any(a.objects for a in opened):
        # Only Ghostscript's rewrite could open it and nothing is drawn on any page: a damaged file (e.g. a fuzzed
        # cross-reference stream), not a blank one. Without `gs` the same file fails in pdfplumber outright.
        return _fail(f"corrupt PDF: {repaired}", "failed")
    if any(a.pages for a in opened):
        if failed:  # one engine sees empty pages, the other cannot parse the file: treat it as broken
            return _fail(f"corrupt PDF: {failed[-1].error or 'unreadable'}", "failed")
        return _fail(BLANK_REASON, "skipped")
    if opened:
        return _fail("corrupt PDF: the document has no pages", "failed")
    cause = next((a.error for a in reversed(failed) if a.error), "unreadable")
    return _fail(f"corrupt PDF: {cause}", "failed")


def _ok(a: _Attempt, engine: str, ocr_path: str | None = None, deadline: float | None = None) -> dict[str, Any]:
    raw = list(a.pages or [])
    warnings = []
    if ocr_path is not None:  # image-only pages → OCR text (page locations unchanged)
        blank = [i for i, text in enumerate(raw) if not text]
        found, late = ocr_pages(ocr_path, blank, deadline if deadline is not None else time.monotonic() + 60)
        for i, text in found.items():
            raw[i] = clean_page_text(text)
        if found:
            noun = "page" if len(found) == 1 else "pages"
            warnings.append(f"{noun} {describe_pages(sorted(i + 1 for i in found))} read by OCR")
        if late:
            warnings.append(f"OCR stopped at the time limit: {describe_pages([i + 1 for i in late])} not read")
    empty = [i + 1 for i, text in enumerate(raw) if not text]
    if empty:
        noun = "page" if len(empty) == 1 else "pages"
        verb = "has" if len(empty) == 1 else "have"
        warnings.append(f"{noun} {describe_pages(empty)} {verb} no text layer")
    pages = clean_pages(raw)  # printer's slugs, bar glyphs, margin line numbers, running heads
    headings = place_headings(a.outline, pages)
    return {"ok": True, "pages": pages, "title": a.title, "engine": engine, "warnings": warnings,
            "headings": headings}


def _fail(reason: str, status: str) -> dict[str, Any]:
    return {"ok": False, "status": status, "reason": reason}


# -- the worker loop (child process) -------------------------------------------------------------------------


def _set_address_space_limit(mb: int | None, original: tuple[int, int] | None) -> None:
    """Cap this process's virtual memory (soft limit only, so it can be raised again for the next file)."""
    try:
        import resource
    except ImportError:  # Windows: no RLIMIT_AS; the timeout still bounds the work
        return
    if original is None:
        return
    soft, hard = original
    if mb:
        want = int(mb) * 1024 * 1024
        if hard != resource.RLIM_INFINITY:
            want = min(want, hard)
        resource.setrlimit(resource.RLIMIT_AS, (want, hard))
    else:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _original_limit() -> tuple[int, int] | None:
    try:
        import resource

        return resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):
        return None


def handle(request: dict[str, Any], original: tuple[int, int] | None) -> dict[str, Any]:
    """Serve one request inside the worker. Test hooks ("_crash", "_sleep") exist to exercise the parent."""
    op = request.get("op")
    if op == "ping":
        return {"ok": True, "pid": os.getpid()}
    if op == "_sleep":
        time.sleep(float(request.get("seconds", 0)))
        return {"ok": True}
    if op == "_crash":
        os.abort()
    if op != "extract":
        return _fail(f"unknown request {op!r}", "failed")
    mb = request.get("max_memory_mb")
    fmt = request.get("format") or ".pdf"
    budget = request.get("ocr_budget_s")
    deadline = time.monotonic() + float(budget) if budget else None
    what = "PDF" if fmt == ".pdf" else "document"
    try:
        _set_address_space_limit(mb, original)
        if fmt != ".pdf":  # Word/ODF/RTF/slides/EPUB: same bounds, readers in ingest/office
            from .office import extract_office

            return extract_office(request["path"], fmt)
        return extract(request["path"], request.get("engine") or "auto", ocr=bool(request.get("ocr")),
                       deadline=deadline)
    except Exception as exc:  # MemoryError, or a failure we did not classify: still one file, not the app
        if is_memory_error(exc):
            noun = "PDF extraction" if fmt == ".pdf" else "reading the document"
            return {**_fail(f"{noun} needed more than {mb} MB", "failed"), "restart": True}
        return _fail(f"corrupt {what}: {_short(exc)}", "failed")
    finally:
        try:
            _set_address_space_limit(None, original)
        except (OSError, ValueError):
            pass


PARENT_POLL_S = 0.5


def exit_with_parent(parent_pid: int, poll_s: float = PARENT_POLL_S) -> threading.Thread | None:
    """Leave as soon as the app that started us is gone (kill -9, crash), even in the middle of a file.

    The app enforces our time bound by killing us; once it has died nobody would, and a hostile PDF could keep
    this orphan busy for minutes (or for ever). A daemon thread notices the re-parenting (PDFium and zlib release
    the GIL; pdfminer is pure Python) and exits at once. (Not PR_SET_PDEATHSIG: that fires when the parent
    *thread* that started us ends, e.g. a GUI worker thread, while the app is alive.)
    """
    if os.name != "posix" or parent_pid <= 1:
        return None

    def watch() -> None:
        while True:
            if os.getppid() != parent_pid:
                os._exit(0)
            time.sleep(poll_s)

    thread = threading.Thread(target=watch, name="exit-with-parent", daemon=True)
    thread.start()
    return thread


def worker_main(conn: Any, parent_pid: int | None = None) -> None:
    """Child-process entry point: import the engines once, then serve requests until EOF or "exit"."""
    exit_with_parent(parent_pid if parent_pid is not None else os.getppid())
    try:
        for engine in ("pdfplumber", "pypdfium2"):  # warm imports so the first PDF pays no import cost
            importlib.import_module(engine)
    except Exception as exc:  # reported per request instead
        conn.send({"ok": False, "status": "failed", "reason": f"PDF support is not installed: {exc}"})
    else:
        conn.send({"ok": True, "ready": True, "pid": os.getpid()})
    original = _original_limit()
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        if not isinstance(request, dict) or request.get("op") == "exit":
            return
        reply = handle(request, original)
        try:
            conn.send(reply)
        except (OSError, ValueError):
            return
        if reply.get("restart"):
            return  # after a MemoryError the heap may be fragmented: let the parent start a fresh worker


if __name__ == "__main__":  # manual debugging: python -m desktop_memory.ingest.pdf_worker FILE.pdf [engine]
    result = extract(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "auto")
    if result.get("ok"):
        for n, text in enumerate(result["pages"], 1):
            print(f"--- page {n} ({len(text)} chars)")
            print(text[:500])
        print(result["warnings"], result["title"], result["engine"])
    else:
        print(result)
