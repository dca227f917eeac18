"""One file → ExtractedDoc, or an ExtractionError whose reason a person understands.

Text-like files and HTML are read here (bounded by the size cap, opened non-blocking so a FIFO can't hang us);
PDFs and the zip-based document formats (docx, pptx, odt, odp, epub) and RTF go to the sandboxed worker in
``pdf.py``.
"""

from __future__ import annotations

import os
import re
import stat

from ..chunking.mdparse import first_h1, front_matter_title
from ..config import IngestSettings
from ..errors import ExtractionError
from ..models import DocHeading, ExtractedDoc
from .detect import READ_FLAGS, SNIFF_BYTES, binary_extension, detect_language, kind_from_name, sniff_binary
from .encoding import decode_bytes, guess_note
from .walk import MIB, format_size_reason, special_file_kind

_READ_BLOCK = 1 << 20


def read_document(path: str, settings: IngestSettings) -> ExtractedDoc:
    """Extract one file. Raises ExtractionError(reason, status="skipped"|"failed")."""
    ext = binary_extension(path)
    if ext:
        raise ExtractionError(f"binary file ({ext})", status="skipped")
    kind = kind_from_name(path)
    if kind == "pdf":
        from .pdf import extract_pdf  # lazy: keeps multiprocessing out of text-only use

        return extract_pdf(path, settings)
    if kind in ("document", "slides", "ebook"):
        from .pdf import extract_document

        return extract_document(path, settings)
    data = read_bytes_checked(path, settings)
    if kind == "html":
        return read_html(data, settings)
    if kind is None and data.startswith(b"%PDF-"):
        from .pdf import extract_pdf

        return extract_pdf(path, settings)
    why = sniff_binary(data[:SNIFF_BYTES])
    if why:
        raise ExtractionError(why, status="skipped")
    text, encoding = decode_bytes(data)
    if not text.strip():
        raise ExtractionError("file contains only whitespace", status="skipped")
    if _looks_garbled(text):
        raise ExtractionError("not valid text (unknown encoding or binary data)", status="skipped")
    doc = _build_doc(path, kind or "text", text)
    note = guess_note(encoding)  # a guessed encoding is recorded with the document (Library / `list`)
    if note:
        doc.warnings.append(note)
    return doc


def read_html(data: bytes, settings: IngestSettings) -> ExtractedDoc:
    """A web page: main text under h1–h3 heading paths; the declared charset is checked against the bytes."""
    from .office.html import decode_html, html_to_builder
    from .office.layout import DocumentProblem, TextBuilder

    why = sniff_binary(data[:SNIFF_BYTES])
    if why:
        raise ExtractionError(why, status="skipped")
    text, warnings = decode_html(data)
    out = TextBuilder()
    title = html_to_builder(text, out)
    try:
        reply = out.result("html", title=title, warnings=warnings)
    except DocumentProblem as exc:
        raise ExtractionError("no text found in the page", status=exc.status) from None
    return ExtractedDoc(kind="html", text=reply["text"], title=reply["title"], warnings=reply["warnings"],
                        headings=[DocHeading(*h) for h in reply["headings"]])


def _build_doc(path: str, kind: str, text: str) -> ExtractedDoc:
    if kind == "markdown":
        return ExtractedDoc(kind="markdown", text=text, title=front_matter_title(text) or first_h1(text))
    if kind == "code":
        return ExtractedDoc(kind="code", text=text, language=detect_language(path))
    return ExtractedDoc(kind="text", text=text)


def check_file(path: str, settings: IngestSettings) -> os.stat_result:
    """Stat-level checks shared by every reader: exists, regular, not empty, under the size cap, readable."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ExtractionError("file disappeared while indexing") from None
    except PermissionError:
        raise ExtractionError("permission denied") from None
    except OSError as exc:
        raise ExtractionError(f"cannot access file: {exc.strerror or exc}") from None
    _check_stat(st, settings)
    return st


def _check_stat(st: os.stat_result, settings: IngestSettings) -> None:
    if stat.S_ISDIR(st.st_mode):
        raise ExtractionError("is a folder, not a file", status="skipped")
    if not stat.S_ISREG(st.st_mode):
        raise ExtractionError(f"not a regular file ({special_file_kind(st.st_mode)})", status="skipped")
    if st.st_size == 0:
        raise ExtractionError("empty file", status="skipped")
    if st.st_size > settings.max_file_mb * MIB:
        raise ExtractionError(format_size_reason(st.st_size, settings.max_file_mb), status="skipped")


def open_checked(path: str) -> int:
    """os.open for reading, non-blocking (a FIFO opens at once instead of waiting for a writer)."""
    try:
        return os.open(path, READ_FLAGS)
    except FileNotFoundError:
        raise ExtractionError("file disappeared while indexing") from None
    except PermissionError:
        raise ExtractionError("permission denied") from None
    except OSError as exc:
        raise ExtractionError(f"cannot open file: {exc.strerror or exc}") from None


def read_bytes_checked(path: str, settings: IngestSettings) -> bytes:
    """The whole file, after the checks in ``check_file`` (done on the open descriptor, so no race)."""
    fd = open_checked(path)
    try:
        try:
            st = os.fstat(fd)
        except OSError as exc:
            raise ExtractionError(f"cannot access file: {exc.strerror or exc}") from None
        _check_stat(st, settings)
        limit = int(settings.max_file_mb * MIB)
        parts: list[bytes] = []
        total = 0
        while True:
            try:
                block = os.read(fd, _READ_BLOCK)
            except BlockingIOError:
                raise ExtractionError("not a regular file (would block)", status="skipped") from None
            except OSError as exc:
                raise ExtractionError(f"read error: {exc.strerror or exc}") from None
            if not block:
                break
            total += len(block)
            if total > limit:  # grew while we were reading
                raise ExtractionError(format_size_reason(total, settings.max_file_mb), status="skipped")
            parts.append(block)
    finally:
        os.close(fd)
    if total == 0:
        raise ExtractionError("empty file", status="skipped")
    return b"".join(parts)


_GARBAGE = re.compile("[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f-\x9f\ufffd]")


def _looks_garbled(text: str) -> bool:
    """Many replacement characters or control codes after decoding: a wrong guess or disguised binary data."""
    sample = text[:100_000]
    bad = len(_GARBAGE.findall(sample))
    return bad > max(8, len(sample) // 50)
