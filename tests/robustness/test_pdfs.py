"""Issue 5 §1: every PDF of the eval set through the real CLI in ONE batch, and batches where one PDF breaks a
bound (time, memory) while the rest index. (Per-file extraction is covered by tests/unit/ingest/test_pdf.py.)"""

from __future__ import annotations

import csv
import json
import os
import shutil
import time

import pytest

from desktop_memory.config import IngestSettings, Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.ingest.pdf_worker import ENCRYPTED_REASON, scanned_reason
from desktop_memory.service import MemoryService
from tests.support.pdf_in_process import extract_pdf_in_process

from .conftest import PDFS, audit_db, run_cli
from .pdf_bombs import decompression_bomb_pdf, slow_pdf


def manifest() -> list[dict[str, str]]:
    with open(PDFS / "manifest.tsv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def expected_outcome(row: dict[str, str]) -> tuple[str, str]:
    """(status, reason or reason prefix) the manifest implies, in the words a person reads."""
    expected = row["expected"]
    if expected == "text extractable":
        return "indexed", ""
    if expected == "needs password":
        return "skipped", ENCRYPTED_REASON
    if expected.startswith("opens; no extractable text"):
        return "skipped", scanned_reason(False)
    if expected.startswith("unreadable"):
        return ("skipped", "empty file") if row["bytes"] == "0" else ("failed", "corrupt PDF: ")
    raise AssertionError(f"unknown manifest expectation {expected!r}")


# (file, 1-based page, phrase on that page): the CLI must return that page with the passage.
PAGE_PHRASES = [
    ("tracemonkey.pdf", 1, "Trace-based Just-in-Time Type Specialization"),
    ("chelsea_pdta.pdf", 1, "municipalité de Chelsea"),
    ("multilang.pdf", 1, "Привет, мир"),
]


def test_whole_pdf_folder_in_one_cli_batch(tmp_path, hash_config, ledger, eval_present):
    rows = manifest()
    lib = tmp_path / "pdfs"
    lib.mkdir()
    for row in rows:
        shutil.copyfile(PDFS / row["file"], lib / row["file"])
    ledger.tried_folder(lib)
    ledger.fault("hostile PDF from the eval set (encrypted/scanned/corrupt/empty)",
                 sum(expected_outcome(r)[0] != "indexed" for r in rows))
    db = tmp_path / "pdfs.db"

    started = time.monotonic()
    proc = run_cli(db, "index", lib, "--json", config=hash_config, timeout=600)
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert elapsed < 300, f"one batch of {len(rows)} PDFs took {elapsed:.0f} s"
    summary = json.loads(proc.stdout)
    reported = {os.path.basename(o["path"]): (o["status"], o["reason"]) for o in summary["outcomes"]}
    assert set(reported) == {r["file"] for r in rows}, "every file gets exactly one outcome"

    state = audit_db(db, ledger)
    assert set(state.docs) == {str(lib / r["file"]) for r in rows}
    for row in rows:
        path = str(lib / row["file"])
        status, error, n_chunks = state.docs[path]
        want_status, want_reason = expected_outcome(row)
        assert status == want_status, (row["file"], status, error)
        assert reported[row["file"]][0] == want_status
        if want_status != "indexed":
            assert error.startswith(want_reason) and error != "corrupt PDF: ", (row["file"], error)
            assert reported[row["file"]][1] == error
            assert n_chunks == 0
            continue
        # Indexed: text AND page numbers on every chunk, exactly the pages that have text.
        pages = state.chunk_pages[path]
        assert pages and all(isinstance(p, int) for p in pages), row["file"]
        assert pages == sorted(pages), f"{row['file']}: chunks out of page order"
        doc = extract_pdf_in_process(str(lib / row["file"]))
        with_text = {number for number, start, end in doc.pages if end > start}
        assert set(pages) == with_text, row["file"]
        assert max(pages) <= int(row["pages"])

    for name, page, phrase in PAGE_PHRASES:
        out = run_cli(db, "search", phrase, "--kind", "pdf", "--backend", "keyword", "--json", "-k", "10",
                      config=hash_config)
        assert out.returncode == 0, out.stderr
        hits = [h for h in json.loads(out.stdout) if phrase in " ".join(h["text"].split())]
        assert hits and {os.path.basename(h["source"]) for h in hits} == {name}, phrase
        doc = extract_pdf_in_process(str(lib / name))
        page_text = {number: " ".join(doc.text[start:end].split()) for number, start, end in doc.pages}
        assert phrase in page_text[page]
        for hit in hits:  # the page a result names is the page its passage is on
            where = hit["location"]
            assert f"p. {where['page']}" in where["display"]
            body = hit["text"]  # a PDF chunk from a bookmarked section starts with its breadcrumb line
            crumb = " › ".join(where["heading_path"])
            if crumb and body.startswith(crumb + "\n\n"):
                body = body[len(crumb) + 2:]
            assert " ".join(body.split()) in page_text[where["page"]], (name, where)

    # A second run reads nothing: every outcome is remembered.
    again = json.loads(run_cli(db, "index", lib, "--json", config=hash_config).stdout)
    assert again["unchanged"] == len(rows) and again["chunks_embedded"] == 0


@pytest.fixture(scope="module")
def bombs(tmp_path_factory):
    d = tmp_path_factory.mktemp("bombs")
    return slow_pdf(d / "a-slow.pdf"), decompression_bomb_pdf(d / "b-inflates-512mb.pdf")


def test_pdfs_over_the_time_and_memory_bounds_fail_and_the_batch_goes_on(tmp_path, bombs, ledger, eval_present):
    lib = tmp_path / "lib"
    lib.mkdir()
    slow, bomb = bombs
    shutil.copyfile(slow, lib / slow.name)
    shutil.copyfile(bomb, lib / bomb.name)
    for name in ("crazyones.pdf", "multilang.pdf", "tracemonkey.pdf"):
        shutil.copyfile(PDFS / name, lib / name)
    data = (PDFS / "tracemonkey.pdf").read_bytes()
    (lib / "c-truncated.pdf").write_bytes(data[: len(data) // 3])  # a download cut short
    (lib / "d-not-really.pdf").write_text("just some text with a .pdf name\n", encoding="utf-8")
    shutil.copyfile(PDFS / "crazyones.pdf", lib / "e-pdf-without-extension")  # sniffed as a PDF
    (lib / "notes.md").write_text("# Notes\n\nThe batch must go on after a PDF is killed.\n", encoding="utf-8")
    ledger.tried_folder(lib)
    ledger.fault("PDF over the time bound")
    ledger.fault("PDF over the memory bound (decompression bomb)")
    ledger.fault("truncated / fake PDF", 2)

    settings = Settings(ingest=IngestSettings(pdf_timeout_s=5.0, pdf_max_memory_mb=300))
    svc = MemoryService(settings, db_path=tmp_path / "b.db", embedder=HashEmbedder(64))
    try:
        started = time.monotonic()
        summary = svc.index_paths([lib])
        elapsed = time.monotonic() - started
    finally:
        svc.close()
    by_name = {os.path.basename(o.path): (o.status, o.reason) for o in summary.outcomes}
    assert by_name[slow.name] == ("failed", "PDF extraction took longer than 5 s")
    assert by_name[bomb.name] == ("failed", "PDF extraction needed more than 300 MB")
    assert by_name["d-not-really.pdf"][0] == "failed" and by_name["d-not-really.pdf"][1].startswith("corrupt PDF: ")
    status, reason = by_name["c-truncated.pdf"]
    assert status == "indexed" or (status == "failed" and reason.startswith("corrupt PDF: ")), (status, reason)
    for name in ("crazyones.pdf", "multilang.pdf", "tracemonkey.pdf", "e-pdf-without-extension", "notes.md"):
        assert by_name[name][0] == "indexed", (name, by_name[name])
    # bounded: the slow file costs its 5 s, not the minute it would take (start-ups of fresh workers aside)
    assert elapsed < 90, f"batch took {elapsed:.0f} s"

    state = audit_db(tmp_path / "b.db", ledger)
    assert state.docs[str(lib / slow.name)][:2] == ("failed", "PDF extraction took longer than 5 s")
    assert state.docs[str(lib / bomb.name)][:2] == ("failed", "PDF extraction needed more than 300 MB")
    assert set(state.chunk_pages[str(lib / "tracemonkey.pdf")]) == set(range(1, 15))
    assert state.pending == set(), "everything that indexed was embedded"
