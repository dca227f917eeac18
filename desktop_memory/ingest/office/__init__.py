"""Readers for the document formats people keep besides PDFs: Word, OpenDocument, RTF, PowerPoint, EPUB, HTML.

Standard library only (zipfile, xml.etree, html.parser): nothing is added to the app bundle. The zip-based
formats and RTF are read inside the sandbox worker (``ingest/pdf_worker.py``: time and memory bounds) through
``extract_office``; HTML is read in the app's process (a linear-time parser over a size-capped file).

Replies are plain dicts (they cross the worker's pipe):
    {"ok": True, "kind": "document"|"slides"|"ebook", "text": str, "headings": [(level, title, start, end)],
     "pages": [(number, start, end)] | None, "title": str | None, "warnings": [str]}
    {"ok": False, "status": "skipped"|"failed", "reason": str}
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from .layout import DocumentProblem

# extension → (what the file claims to be, in words; kind)
OFFICE_FORMATS: dict[str, tuple[str, str]] = {
    ".docx": ("Word document", "document"), ".docm": ("Word document", "document"),
    ".odt": ("OpenDocument text", "document"), ".rtf": ("RTF document", "document"),
    ".pptx": ("PowerPoint presentation", "slides"), ".pptm": ("PowerPoint presentation", "slides"),
    ".odp": ("OpenDocument presentation", "slides"), ".epub": ("EPUB e-book", "ebook"),
}
HTML_EXTS = frozenset({".html", ".htm", ".xhtml"})


def _reader(ext: str) -> Callable[[str], dict[str, Any]]:
    from .docx import read_docx
    from .epub import read_epub
    from .odf import read_odf
    from .pptx import read_pptx
    from .rtf import read_rtf

    readers: dict[str, Callable[[str], dict[str, Any]]] = {
        ".docx": read_docx, ".docm": read_docx, ".pptx": read_pptx, ".pptm": read_pptx,
        ".odt": partial(read_odf, presentation=False), ".odp": partial(read_odf, presentation=True),
        ".epub": read_epub, ".rtf": read_rtf,
    }
    return readers[ext]


def extract_office(path: str, ext: str) -> dict[str, Any]:
    """Read one document (in the worker). Never raises for a bad file: the reply says what is wrong."""
    ext = ext.lower()
    if ext not in OFFICE_FORMATS:
        return {"ok": False, "status": "failed", "reason": f"unsupported document format {ext}"}
    what = OFFICE_FORMATS[ext][0]
    try:
        return _reader(ext)(path)
    except DocumentProblem as exc:
        return {"ok": False, "status": exc.status, "reason": exc.reason}
    except MemoryError:
        raise
    except RecursionError:
        return {"ok": False, "status": "failed", "reason": f"corrupt {what}: nested too deeply to read"}
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, UnicodeError, OSError, EOFError) as exc:
        cause = " ".join(str(exc).split())[:120] or type(exc).__name__
        return {"ok": False, "status": "failed", "reason": f"corrupt {what}: {cause}"}


__all__ = ["HTML_EXTS", "OFFICE_FORMATS", "DocumentProblem", "extract_office"]
