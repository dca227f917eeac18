"""`desktop-memory-gui --smoke` (run_gui_smoke) against the real window and model: the same check the standalone
bundle runs in CI (packaging/ci_bundle_check.sh), here so a GUI change that breaks it shows up in the test suite."""

from __future__ import annotations

import os

import pytest

from desktop_memory.gui.smoke import run_gui_smoke, tiny_pdf

pytestmark = pytest.mark.slow


def test_gui_smoke_passes_and_leaves_no_trace(qapp, capsys):
    before = {k: os.environ.get(k) for k in ("DESKTOP_MEMORY_CONFIG_DIR", "DESKTOP_MEMORY_DATA_DIR", "QT_QPA_PLATFORM")}
    assert run_gui_smoke() == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert "[FAIL]" not in out
    assert "window indexed a note and a PDF" in out and "GUI smoke check passed" in out
    after = {k: os.environ.get(k) for k in before}
    assert after == before  # the smoke check points config/data dirs at a temp folder only for its own run


def test_tiny_pdf_is_extractable_by_both_engines(tmp_path):
    from desktop_memory.ingest.pdf_worker import extract

    p = tmp_path / "t.pdf"
    p.write_bytes(tiny_pdf(["Hello (PDF) world", "second line"]))
    for engine in ("pdfium", "pdfplumber"):
        r = extract(str(p), engine)
        assert r["ok"], r
        assert "Hello (PDF) world" in r["pages"][0] and "second line" in r["pages"][0]
