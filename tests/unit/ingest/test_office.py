"""Document readers on the 56 real files of tests/data/eval/office (16 hostile), through the sandbox worker.

Every non-hostile file must come out with its text and locations; every hostile one skipped or failed with the
reason its README asks for.
"""

from __future__ import annotations

import csv
import io
import zipfile
from pathlib import Path

import pytest

from desktop_memory.chunking import chunk_document
from desktop_memory.config import ChunkSettings, IngestSettings
from desktop_memory.errors import ExtractionError
from desktop_memory.ingest.detect import detect_kind
from desktop_memory.ingest.office import extract_office
from desktop_memory.ingest.office.rtf import read_rtf_bytes
from desktop_memory.ingest.pdf import PdfExtractor, extract_document
from desktop_memory.ingest.readers import read_document
from desktop_memory.models import ExtractedDoc
from tests.conftest import OFFICE
from tests.support.chunk_contract import chunk_problems

FILES = OFFICE / "files"
S = IngestSettings()
CFG = ChunkSettings()

ENCRYPTED = ("skipped", "password-protected document (encrypted); remove the password to index it")
TRUNCATED = "truncated or damaged zip archive (no central directory)"

# hostile files → (status, reason)
HOSTILE = {
    "docx_encrypted_passtika.docx": ENCRYPTED,
    "docx_encrypted_pass.docx": ENCRYPTED,
    "docx_truncated.docx": ("failed", f"corrupt Word document: {TRUNCATED}"),
    "docx_truncated_62886.docx": ("failed", f"corrupt Word document: {TRUNCATED}"),
    "docx_not_docx_zip.docx": ("failed", "not a Word document (the zip holds no word/document.xml)"),
    "pptx_encrypted_passtika.pptx": ENCRYPTED,
    "pptx_corrupt_fuzzed.pptx": ("failed", f"corrupt PowerPoint presentation: {TRUNCATED}"),
    "odt_encrypted.odt": ENCRYPTED,
    "odt_not_a_zip.odt": ("failed", "not an OpenDocument text (not a zip package)"),
    "epub3_lcp_drm.epub": ("skipped", "DRM-protected e-book (Readium LCP); it cannot be indexed"),
    "epub_truncated_no_eocd.epub": ("failed", f"corrupt EPUB e-book: {TRUNCATED}"),
}
# files that hold no text at all (checked by hand: pictures only; SmartArt with empty placeholders)
NO_TEXT = {
    "docx_images.docx": "no text found: the document holds only pictures",
    "pptx_smartart.pptx": "no text found in the document",
}
# file → (phrases that must be in the text, a location that must be on some chunk, warning or "")
INDEXED = {
    "docx_headings_tables.docx": (["This is a sample Microsoft Word Document", "This is the footer for our document"],
                                  "", ""),
    "docx_heading_levels.docx": (["Lorem ipsum"], "First paragraph › Second paragraph › Third paragraph", ""),
    "docx_multilevel_lists.docx": (["Intervening table | Within cell 1", "Footnote list 2a", "Let’s add a list"],
                                   "", ""),
    "docx_numbered_restart.docx": (["Entry #2, with children"], "", ""),
    "docx_various_features.docx": (["Here is a text box", "Row 1 Col 1 | Row 1 Col 2", "This is a footnote.",
                                    "𐌲𐌿𐍄𐌹𐍃𐌺"], "", ""),
    "docx_footnotes.docx": (["Eto ochen prostoy text so snoskoy", "snoska"], "", ""),
    "docx_tables_real.docx": (["ILLUSTRATIVE CASES"], "(V) ILLUSTRATIVE CASES", ""),
    "docx_header_footer_unicode.docx": (["GBP - £", "EUR - €"], "", ""),
    "docx_russian_uzbek_attachments.docx": (["Русский вариант"], "", ""),
    "docx_japanese_ruby.docx": (["東京"], "", ""),
    "docx_comments.docx": (["Other text worthy of note", "Steve Canny: Text with hyperlink"], "", ""),
    "pptx_speaker_notes.pptx": (["Notes: I am the notes of the first slide"], "Title of the first slide · slide 1",
                                ""),
    "pptx_table_lists.pptx": (["Row 1 Col 1 | Row 1 Col 2", "Number bullet 3"], "slide 1", ""),
    "pptx_japanese.pptx": (["ゾルゲと尾崎、淡々と最期"], "slide 1", ""),
    "pptx_three_slides.pptx": (["Attachment Test"], "slide 3", ""),
    "pptx_missing_rels.pptx": (["Subtitle Text"], "Presentation Title Text · slide 1", ""),
    "odt_ooo3_complex.odt": (["This is a rather difficult test document", "Rectangle Title\nThis is a rectangle"],
                             "", ""),
    "odt_lists.odt": (["And another test is here", "Third"], "", ""),
    "odt_with_macro.odt": (["Click the smiley"], "", "contains macros (not run)"),
    "odt_libreoffice13.odt": (["This is an example document"], "", ""),
    "odt_dutch_form.odt": (["Identificatie vredegerecht | Vredegerecht Name"], "", ""),
    "odp_libreoffice13.odp": (["An example Impress file"], "slide 1", ""),
    "odp_master_footer.odp": (["Master footer is here"], "slide 1", ""),
    "epub3_childrens_lit.epub": (["Andersen, Hans Christian, Fairy Tales."], "", ""),
    "epub2_tika.epub": (["This is the text for chapter One"], "", ""),
    "epub2_minimal.epub": (["Loomings"], "Loomings", ""),
    "epub_no_mimetype.epub": (["Loomings"], "", "invalid OCF: mimetype missing"),
    "epub3_font_obfuscated.epub": (["April is the cruellest month"], "I. THE BURIAL OF THE DEAD", ""),
    "epub3_arabic_rtl.epub": (["من أين تأتي الحياة"], "", ""),
    "epub3_japanese_vertical.epub": (["山路を登りながら、こう考えた。"], "一", ""),
    "html_wikipedia_mozilla.html": (["Mozilla"], "Mozilla › History", ""),
    "html_wikipedia_large.html": (["New Zealand"], "New Zealand", ""),
    "html_httpd_core_doc.html": (["AcceptFilter"], "Apache Core Features › AcceptFilter Directive", ""),
    "html_httpd_bind_euckr.html": (["주소와 포트 지정"], "", ""),
    "html_httpd_index_latin1.html": (["Diese Übersetzung ist möglicherweise nicht mehr aktuell"], "", ""),
    "html_mozhacks_blog.html": (["XMLHttpRequest"], "Feature detection", ""),
    "html_firefox_nightly_blog.html": (["These Weeks in Firefox"], "These Weeks in Firefox: Issue 85 › Highlights",
                                       ""),
    "html_v8_blog.html": (["standalone WebAssembly"], "", ""),
    "html_arabic_misleading_charset.html": (["كان هناك رجل حكيم"], "",
                                            "declared charset utf-8 does not match the bytes; decoded as cp1256"),
    "rtf_word_basic.rtf": (["Test d’indexation Word"], "", ""),
    "rtf_czech_word2010.rtf": (["Svitky od Mrtvého moře"], "", ""),
    "rtf_japanese_cp932.rtf": (["こんにちは", "テスト"], "", ""),
    "rtf_various.rtf": (["Row 1 Col 1 | Row 1 Col 2", "ゾルゲと尾崎、淡々と最期"], "", ""),
}


def manifest_names() -> list[str]:
    with open(OFFICE / "manifest.tsv", newline="", encoding="utf-8") as fh:
        return [row["filename"] for row in csv.DictReader(fh, delimiter="\t")]


@pytest.fixture(scope="module")
def extractor():
    ex = PdfExtractor()
    yield ex
    ex.close()


def read(name: str, extractor: PdfExtractor) -> ExtractedDoc:
    path = str(FILES / name)
    if name.endswith(".html"):
        return read_document(path, S)  # HTML is read in-process
    return extract_document(path, S, extractor=extractor)


def test_every_file_has_an_expectation(eval_dir: Path) -> None:
    names = manifest_names()
    assert len(names) == 56
    assert sorted(names) == sorted([*HOSTILE, *NO_TEXT, *INDEXED])


@pytest.mark.parametrize("name", sorted(HOSTILE) + sorted(NO_TEXT))
def test_hostile_and_empty_files_say_why(eval_dir: Path, extractor: PdfExtractor, name: str) -> None:
    with pytest.raises(ExtractionError) as info:
        read(name, extractor)
    expected = HOSTILE.get(name) or ("skipped", NO_TEXT[name])
    assert (info.value.status, info.value.reason) == expected


@pytest.mark.parametrize("name", sorted(INDEXED))
def test_documents_are_read_with_locations(eval_dir: Path, extractor: PdfExtractor, name: str) -> None:
    phrases, location, warning = INDEXED[name]
    doc = read(name, extractor)
    assert doc.kind == detect_kind(FILES / name)
    for phrase in phrases:
        assert phrase in doc.text
    assert warning in doc.warnings if warning else doc.warnings == []
    chunks = chunk_document(doc, CFG)
    assert chunks and chunk_problems(doc, chunks, CFG) == []
    assert all(c.location.line_start is None for c in chunks)  # no line numbers in laid-out text
    if location:
        assert any(location in c.location.describe() for c in chunks), [c.location.describe() for c in chunks]
    if doc.kind == "slides":
        assert all(c.location.slide and c.location.page is None for c in chunks)


def test_html_leaves_out_scripts_styles_and_navigation(eval_dir: Path) -> None:
    doc = read_document(str(FILES / "html_wikipedia_mozilla.html"), S)
    assert "function(" not in doc.text and "RLCONF" not in doc.text and "{" not in doc.text[:2000]
    assert "Jump to navigation" not in doc.text and "Personal tools" not in doc.text
    blog = read_document(str(FILES / "html_firefox_nightly_blog.html"), S)
    assert "gtag(" not in blog.text and "font-family" not in blog.text


def test_ruby_guides_are_not_text(eval_dir: Path, extractor: PdfExtractor) -> None:
    assert "とうきょう" not in read("docx_japanese_ruby.docx", extractor).text
    assert "山路やまみち" not in read("epub3_japanese_vertical.epub", extractor).text


def test_zip_bomb_is_refused(tmp_path: Path, extractor: PdfExtractor) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("word/document.xml", b"<w:document>" + b" " * (20 * 1024 * 1024) + b"</w:document>")
    bomb = tmp_path / "bomb.docx"
    bomb.write_bytes(buf.getvalue())
    assert bomb.stat().st_size < 1024 * 1024
    with pytest.raises(ExtractionError) as info:
        extract_document(str(bomb), S, extractor=extractor)
    assert info.value.status == "failed" and "zip bomb" in info.value.reason


def test_entity_bomb_is_refused(tmp_path: Path, extractor: PdfExtractor) -> None:
    lol = ('<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>'
           '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r>'
           '<w:t>&b;</w:t></w:r></w:p></w:body></w:document>')
    path = tmp_path / "lol.docx"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("word/document.xml", lol)
    with pytest.raises(ExtractionError, match="declares XML entities"):
        extract_document(str(path), S, extractor=extractor)


def test_worker_bounds_apply_to_documents(extractor: PdfExtractor) -> None:
    with pytest.raises(ExtractionError, match=r"^reading the document took longer than 0\.5 s$"):
        extractor.request({"op": "_sleep", "seconds": 30}, timeout_s=0.5, what="document")
    with pytest.raises(ExtractionError, match=r"^corrupt document: the reader crashed \(SIGABRT\)$"):
        extractor.request({"op": "_crash"}, timeout_s=10, what="document")
    assert "Loomings" in extract_document(str(FILES / "epub2_minimal.epub"), S, extractor=extractor).text


def test_unknown_format_and_rtf_edge_cases() -> None:
    assert extract_office("x.doc", ".doc")["ok"] is False
    with pytest.raises(Exception, match="not an RTF document"):
        read_rtf_bytes(b"hello")
    doc = read_rtf_bytes(rb"{\rtf1\ansi{\stylesheet{\s1 heading 1;}}\pard\s1 Intro\par\pard Body \u8364? text\par}")
    assert doc["text"] == "Intro\n\nBody € text"
    assert doc["headings"] == [(1, "Intro", 0, 5)]


def test_whole_office_folder_indexes_and_searches_with_locations(tmp_path: Path, eval_dir: Path) -> None:
    """The real folder through the service: every file accounted for, hits carry slide/heading locations."""
    from desktop_memory.config import Settings
    from desktop_memory.context.packer import source_line
    from desktop_memory.embed.hashing import HashEmbedder
    from desktop_memory.service import MemoryService

    svc = MemoryService(Settings(), db_path=tmp_path / "idx.db", embedder=HashEmbedder(64))
    try:
        summary = svc.index_paths([FILES])
        outcomes = {Path(o.path).name: (o.status, o.reason) for o in summary.outcomes}
        assert {n for n, (st, _) in outcomes.items() if st == "indexed"} == set(INDEXED)
        assert {n: outcomes[n] for n in HOSTILE} == HOSTILE
        hits = svc.search_outcome("notes of the first slide").results
        top = next(r for r in hits if r.source.endswith("pptx_speaker_notes.pptx"))
        assert top.kind == "slides" and top.location.slide == 1 and top.location.page is None
        assert source_line(top.source, top.location).endswith("§ Title of the first slide · slide 1]")
        book = svc.search_outcome("April is the cruellest month").results[0]
        assert book.source.endswith("epub3_font_obfuscated.epub")
        assert book.location.heading_path[0] == "I. THE BURIAL OF THE DEAD"
        assert book.location.line_start is None and "line" not in book.location.describe()
    finally:
        svc.close()


def test_files_skipped_by_an_older_version_are_read_once_a_reader_exists(tmp_path: Path, eval_dir: Path) -> None:
    """An index made before these readers holds .docx as "binary file" and .html as code: they are read again."""
    import os
    import shutil

    from desktop_memory.config import Settings
    from desktop_memory.embed.hashing import HashEmbedder
    from desktop_memory.service import MemoryService

    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("docx_heading_levels.docx", "odt_encrypted.odt"):
        shutil.copyfile(FILES / name, folder / name)
    svc = MemoryService(Settings(), db_path=tmp_path / "idx.db", embedder=HashEmbedder(64))
    try:
        for name in ("docx_heading_levels.docx", "odt_encrypted.odt"):  # what the old version recorded
            st = os.stat(folder / name)
            with svc.writing() as store:
                store.record_outcome(path=str(folder / name), status="skipped", error="binary file (.docx)",
                                     size=st.st_size, mtime=st.st_mtime)
        first = svc.index_paths([folder], embed=False)
        assert {Path(o.path).name: o.status for o in first.outcomes} == {
            "docx_heading_levels.docx": "indexed", "odt_encrypted.odt": "skipped"}
        again = svc.index_paths([folder], embed=False)
        assert again.unchanged == 2 and again.indexed == 0 and again.skipped == 0
    finally:
        svc.close()


def test_a_title_only_slide_still_gets_a_chunk() -> None:
    from desktop_memory.models import DocHeading

    text = "Thank you!\n\nQuestions welcome"
    doc = ExtractedDoc(kind="slides", text=text, pages=[(1, 0, 10), (2, 12, len(text))],
                       headings=[DocHeading(1, "Thank you!", 0, 10)])
    chunks = chunk_document(doc, CFG)
    assert [(c.text, c.location.describe()) for c in chunks] == [
        ("Thank you!\n\nThank you!", "Thank you! · slide 1"), ("Questions welcome", "slide 2")]
    assert chunk_problems(doc, chunks, CFG) == []
