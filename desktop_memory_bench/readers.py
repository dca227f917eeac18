"""Reader speed per format, and OCR on scanned PDFs: ``python -m desktop_memory_bench.readers [--ocr] DIR...``

Every file goes through the app's own path (``read_document``: the sandbox worker for PDFs, Office, ODF, RTF
and EPUB; in-process for HTML) with a warm worker, so the figures are what indexing pays per file. With
``--ocr`` the scanned PDFs of the eval set are indexed with OCR on into a real store and searched for a
phrase of their text (keyword lane), which shows whether OCR text is findable and on which page.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from desktop_memory.config import IngestSettings, Settings
from desktop_memory.errors import ExtractionError
from desktop_memory.ingest.detect import detect_kind
from desktop_memory.ingest.pdf import default_extractor, shutdown_pdf_worker
from desktop_memory.ingest.readers import read_document
from desktop_memory.store.open import sqlite_store

from .eval_data import SHARED_EVAL, missing_data
from .table import render_table

SCANNED = {  # file → a phrase its page shows (read off the rendered page)
    "issue7200.pdf": "Lorem ipsum dolor sit amet",
    "issue7229.pdf": "KL1KF484J8C501419",  # the VIN; its Cyrillic comes out as Latin look-alikes
    "imagemagick-CCITTFaxDecode.pdf": "",
}


def bench_formats(folders: list[Path]) -> str:
    settings = IngestSettings()
    default_extractor().request({"op": "ping"}, timeout_s=60)  # warm worker: start-up is paid once per app
    rows: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for folder in folders:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            kind = detect_kind(path, sniff=False)
            if kind is None:
                continue
            ext = path.suffix.lower()
            row = rows[ext]
            started = time.perf_counter()
            try:
                doc = read_document(str(path), settings)
                row["indexed"] += 1
                row["chars"] += len(doc.text)
            except ExtractionError as exc:
                row[exc.status] += 1
            row["seconds"] += time.perf_counter() - started
            row["files"] += 1
            row["bytes"] += path.stat().st_size
    table = []
    for ext, r in sorted(rows.items()):
        table.append([ext, f"{r['files']:.0f}", f"{r['indexed']:.0f}", f"{r['skipped']:.0f}", f"{r['failed']:.0f}",
                      f"{r['bytes'] / 1e6:.2f}", f"{r['seconds']:.2f}", f"{1000 * r['seconds'] / r['files']:.0f}",
                      f"{r['bytes'] / 1e6 / max(r['seconds'], 1e-9):.1f}"])
    return render_table(["format", "files", "indexed", "skipped", "failed", "MB", "s", "ms/file", "MB/s"], table)


def bench_ocr(pdfs: Path) -> str:
    from desktop_memory.embed.hashing import HashEmbedder
    from desktop_memory.service import MemoryService

    with tempfile.TemporaryDirectory() as tmp:
        base = Settings()
        settings = dataclasses.replace(base, ingest=dataclasses.replace(base.ingest, ocr=True, pdf_timeout_s=900))
        svc = MemoryService(settings, db_path=Path(tmp) / "ocr.db", embedder=HashEmbedder(64))
        rows = []
        try:
            for name, phrase in SCANNED.items():
                folder = Path(tmp) / name.replace(".", "_")
                folder.mkdir()
                shutil.copyfile(pdfs / name, folder / name)
                started = time.perf_counter()
                summary = svc.index_paths([folder], embed=False)
                seconds = time.perf_counter() - started
                outcome = summary.outcomes[0]
                with svc.reading() as leased:
                    store = sqlite_store(leased, "This benchmark")  # it reads SQLite's own tables
                    pages = len({r[0] for r in store.conn.execute(
                        "select c.page from chunks c join documents d on d.id = c.doc_id where d.path like ?",
                        (f"%{name}",))})
                found = "-"
                if phrase:
                    hits = [h for h in svc.search_outcome(phrase, backend="keyword").results if h.source.endswith(name)]
                    found = f"yes, {hits[0].location.describe()}" if hits else "no"
                rows.append([name, outcome.status, outcome.reason[:50], f"{pages}", f"{seconds:.1f}",
                             f"{pages / seconds:.3f}" if pages else "-", found])
        finally:
            svc.close()
    return render_table(["file", "status", "reason/warning", "pages", "s", "pages/s", "phrase found"], rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m desktop_memory_bench.readers", description=__doc__)
    p.add_argument("folders", nargs="*", type=Path, help="folders of documents (default: the office eval set)")
    p.add_argument("--ocr", action="store_true", help="also OCR the scanned eval PDFs (needs the ocr extra)")
    eval_dir = SHARED_EVAL
    args = p.parse_args(argv)
    folders = args.folders or [eval_dir / "office" / "files"]
    for folder in folders + ([eval_dir / "pdfs"] if args.ocr else []):
        if not folder.is_dir():
            print(missing_data(folder, "a folder of documents"), file=sys.stderr)
            return 2
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    try:
        print(bench_formats(folders))
        if args.ocr:
            print()
            print(bench_ocr(eval_dir / "pdfs"))
    finally:
        shutdown_pdf_worker()
    return 0


if __name__ == "__main__":
    sys.exit(main())
