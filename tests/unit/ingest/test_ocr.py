"""OCR of image-only PDF pages (the optional "ocr" extra) and what happens without it.

The real-OCR test builds a one-page scan (text drawn into a picture, no text layer) so it takes seconds; the
three scanned eval PDFs are measured by ``python -m desktop_memory_bench.readers --ocr`` (docs/BENCHMARKS.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_memory.config import IngestSettings
from desktop_memory.errors import ExtractionError
from desktop_memory.ingest.ocr import ENABLE_HINT, INSTALL_HINT, ocr_available, reading_order
from desktop_memory.ingest.pdf import PdfExtractor, extract_pdf
from desktop_memory.ingest.pdf_worker import scanned_reason

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def make_scan(path: Path, lines: list[str]) -> None:
    """A PDF page that is only a picture of text (what a scanner produces)."""
    import pypdfium2 as pdfium
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(str(FONT), 36) if FONT.exists() else ImageFont.load_default(size=36)
    img = Image.new("RGB", (1000, 120 + 60 * len(lines)), "white")
    draw = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        draw.text((60, 60 + 60 * i), line, fill="black", font=font)
    pdf = pdfium.PdfDocument.new()
    page = pdf.new_page(500, img.height / 2)
    picture = pdfium.PdfImage.new(pdf)
    picture.set_bitmap(pdfium.PdfBitmap.from_pil(img))
    picture.set_matrix(pdfium.PdfMatrix().scale(500, img.height / 2))
    page.insert_obj(picture)
    page.gen_content()
    pdf.save(str(path))
    pdf.close()


def test_reading_order_groups_lines_top_to_bottom() -> None:
    box = lambda x, y, h=20: [[x, y], [x + 50, y], [x + 50, y + h], [x, y + h]]  # noqa: E731
    results = [[box(200, 101), "world", 0.9], [box(10, 100), "hello", 0.9], [box(10, 140), "next line", 0.9]]
    assert reading_order(results) == "hello world\nnext line"


def test_scan_reason_without_ocr(tmp_path: Path) -> None:
    scan = tmp_path / "scan.pdf"
    make_scan(scan, ["Invoice 4711 was paid"])
    ex = PdfExtractor()
    try:
        with pytest.raises(ExtractionError) as info:
            extract_pdf(str(scan), IngestSettings(ocr=False), extractor=ex)
    finally:
        ex.close()
    assert info.value.status == "skipped"
    assert info.value.reason == scanned_reason(False) == (ENABLE_HINT if ocr_available() else INSTALL_HINT)
    assert scanned_reason(True) == INSTALL_HINT or ocr_available()


def test_ocr_reads_a_scanned_page(tmp_path: Path) -> None:
    pytest.importorskip("rapidocr_onnxruntime", reason="the optional OCR extra is not installed")
    scan = tmp_path / "scan.pdf"
    make_scan(scan, ["Invoice 4711 was paid", "Thank you for your order"])
    ex = PdfExtractor()
    try:
        doc = extract_pdf(str(scan), IngestSettings(ocr=True, pdf_timeout_s=300), extractor=ex)
    finally:
        ex.close()
    assert doc.pages == [(1, 0, len(doc.text))]
    assert doc.warnings == ["page 1 read by OCR"]
    flat = " ".join(doc.text.split()).lower()
    assert "invoice" in flat and "4711" in flat and "thank you for your order" in flat
