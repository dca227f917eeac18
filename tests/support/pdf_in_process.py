"""A PDF read in this process, without the worker's sandbox (no time or memory bound): the tests compare it with
what the real path (ingest/pdf.extract_pdf, a bounded child process) gives, and use it where the child would only
cost time."""

from __future__ import annotations

import os

from desktop_memory.ingest import pdf_worker
from desktop_memory.ingest.pdf import build_pdf_doc
from desktop_memory.models import ExtractedDoc


def extract_pdf_in_process(path: str, engine: str = "auto", *, ocr: bool = False) -> ExtractedDoc:
    return build_pdf_doc(pdf_worker.extract(os.path.abspath(path), engine, ocr=ocr))
