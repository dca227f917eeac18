"""OCR for image-only PDF pages, inside the PDF worker (the optional ``ocr`` extra: rapidocr-onnxruntime).

Why RapidOCR: its wheel ships the PP-OCR detection/recognition ONNX models and runs on onnxruntime, which the
app already has; it works offline. Its dependencies (OpenCV above all) cost ~240 MB installed, so it is an
extra and never part of the default bundle.

Pages are rendered by PDFium at 144 dpi; text boxes come back in reading order (top to bottom, then left to
right within a line). OCR stops at the request's deadline and says which pages were left out, so a 300-page scan
gives the pages it managed instead of a timeout.
"""

from __future__ import annotations

import functools
import importlib.util
import time
from typing import Any

RENDER_SCALE = 2.0  # 144 dpi: PP-OCR's detector wants text at least ~10 px high
INSTALL_HINT = "no text layer (scanned PDF?); install the OCR extra to index it"
ENABLE_HINT = "no text layer (scanned PDF?); turn on OCR ([ingest] ocr = true) to index it"
NOTHING_FOUND = "no text layer, and OCR found no text on its pages"
_FPDF_PAGEOBJ_IMAGE = 3


def ocr_available() -> bool:
    """Whether the extra is installed (found, not imported: importing it maps OpenCV, ~200 MB)."""
    try:
        return importlib.util.find_spec("rapidocr_onnxruntime") is not None
    except (ImportError, ValueError):
        return False


@functools.cache
def _get_engine() -> Any:
    """One engine per worker process (loading the models costs ~1 s)."""
    from rapidocr_onnxruntime import RapidOCR

    return RapidOCR()


def page_has_image(page: Any) -> bool:
    import pypdfium2.raw as pdfium_c

    raw = page.raw
    return any(pdfium_c.FPDFPageObj_GetType(pdfium_c.FPDFPage_GetObject(raw, i)) == _FPDF_PAGEOBJ_IMAGE
               for i in range(pdfium_c.FPDFPage_CountObjects(raw)))


def reading_order(boxes: list[Any]) -> str:
    """RapidOCR results ([corners, text, score]) → lines of text, top to bottom, left to right."""
    items = []
    for corners, text, _score in boxes:
        ys = [p[1] for p in corners]
        xs = [p[0] for p in corners]
        items.append((min(ys), max(ys), min(xs), str(text)))
    items.sort()
    lines: list[list[tuple[float, str]]] = []
    bottom = -1.0
    for top, low, left, text in items:
        if lines and top < bottom - 0.5 * (low - top):  # overlaps the current line vertically
            lines[-1].append((left, text))
            bottom = max(bottom, low)
        else:
            lines.append([(left, text)])
            bottom = low
    return "\n".join(" ".join(t for _, t in sorted(line)) for line in lines)


def ocr_pages(path: str, indexes: list[int], deadline: float) -> tuple[dict[int, str], list[int]]:
    """OCR the given 0-based pages that hold an image. Returns ({index: text}, pages skipped for time)."""
    import pypdfium2 as pdfium

    engine = _get_engine()
    found: dict[int, str] = {}
    late: list[int] = []
    doc = pdfium.PdfDocument(path)
    try:
        for i in indexes:
            if time.monotonic() >= deadline:
                late.append(i)
                continue
            page = doc[i]
            try:
                if not page_has_image(page):
                    continue
                image = page.render(scale=RENDER_SCALE).to_numpy()
            finally:
                page.close()
            result, _elapsed = engine(image, use_cls=False)
            text = reading_order(result or [])
            if text.strip():
                found[i] = text
    finally:
        doc.close()
    return found, late
