"""Issue 21 §6: entity bombs in office XML are refused by the parser, wherever they hide, not by a byte sniff.

Each package is built here: a docx/odt/epub whose DTD comes after a 64 KiB comment or is encoded in UTF-16 (both
passed the old sniff of the first 64 KiB for ``<!ENTITY``), an external entity, a parameter entity, and, as
controls, a plain document and an XHTML page with a DOCTYPE line but no inline declarations (EPUBs have them).
Read through the real sandboxed reader (``extract_document`` with the worker process).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from desktop_memory.config import IngestSettings
from desktop_memory.errors import ExtractionError
from desktop_memory.ingest.office.archive import parse_xml
from desktop_memory.ingest.office.layout import DocumentProblem
from desktop_memory.ingest.pdf import PdfExtractor, extract_document

S = IngestSettings()
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
LOL = '<!DOCTYPE d [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">' \
      '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>'
BODY = f'<w:document xmlns:w="{W}"><w:body><w:p><w:r><w:t>&d;</w:t></w:r></w:p></w:body></w:document>'
PLAIN = f'<w:document xmlns:w="{W}"><w:body><w:p><w:r><w:t>hello docx</w:t></w:r></w:p></w:body></w:document>'


@pytest.fixture(scope="module")
def extractor():
    ex = PdfExtractor()
    yield ex
    ex.close()


def _docx(path: Path, document: bytes) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/'
                                          'package/2006/content-types"/>')
        z.writestr("word/document.xml", document)
    return path


BOMBS = {
    "after a 64 KiB comment": ('<?xml version="1.0"?><!--' + "x" * 70_000 + "-->" + LOL + BODY).encode(),
    "in UTF-16": ('<?xml version="1.0" encoding="UTF-16"?>' + LOL + BODY).encode("utf-16"),
    "in UTF-16 after a comment": ('<?xml version="1.0" encoding="UTF-16"?><!--' + "y" * 40_000 + "-->" + LOL
                                  + BODY).encode("utf-16"),
    "external entity": (f'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
                        f'<w:document xmlns:w="{W}"><w:body><w:p><w:r><w:t>&e;</w:t></w:r></w:p></w:body>'
                        "</w:document>").encode(),
    "parameter entity": ('<?xml version="1.0"?><!DOCTYPE d [<!ENTITY % p SYSTEM "http://127.0.0.1:9/x.dtd"> %p;]>'
                         + PLAIN).encode(),
    "external DTD subset": ('<?xml version="1.0"?><!DOCTYPE d SYSTEM "file:///etc/passwd" [<!ELEMENT d ANY>]>'
                            + PLAIN).encode(),
}


@pytest.mark.parametrize("name", list(BOMBS))
def test_bombs_are_refused_by_the_parser(name, tmp_path, extractor):
    path = _docx(tmp_path / "bomb.docx", BOMBS[name])
    with pytest.raises(ExtractionError) as info:
        extract_document(str(path), S, extractor=extractor)
    assert "declares XML entities or an inline DTD" in info.value.reason, info.value.reason
    with pytest.raises(DocumentProblem, match="entity bomb"):
        parse_xml(BOMBS[name], "part")


def test_plain_and_doctype_only_xml_still_read(tmp_path, extractor):
    path = _docx(tmp_path / "ok.docx", ('<?xml version="1.0" encoding="UTF-16"?>' + PLAIN).encode("utf-16"))
    assert "hello docx" in extract_document(str(path), S, extractor=extractor).text
    xhtml = (b'<?xml version="1.0"?><!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" '
             b'"http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd"><html xmlns="http://www.w3.org/1999/xhtml">'
             b"<body><p>page</p></body></html>")
    root = parse_xml(xhtml, "nav")
    assert root.tag == "{http://www.w3.org/1999/xhtml}html"


def test_malformed_xml_is_still_called_malformed():
    with pytest.raises(DocumentProblem, match="malformed XML"):
        parse_xml(b"<w:document><unclosed></w:document>", "part")


def test_hostile_numbers_in_odt_and_docx_attributes_cost_nothing(tmp_path, extractor):
    """``text:s c="999999999999"`` asked for a terabyte of spaces; ``"²"`` passed ``isdigit`` and broke ``int``."""
    office = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
    text = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
    content = (f'<?xml version="1.0"?><office:document-content xmlns:office="{office}" xmlns:text="{text}">'
               '<office:body><office:text><text:h text:outline-level="\u00b2">Heading two</text:h>'
               f'<text:h text:outline-level="{"9" * 5000}">Deep</text:h>'
               '<text:p>left<text:s text:c="999999999999"/>right</text:p></office:text></office:body>'
               "</office:document-content>")
    odt = tmp_path / "spaces.odt"
    with zipfile.ZipFile(odt, "w") as z:
        z.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        z.writestr("content.xml", content)
    doc = extract_document(str(odt), S, extractor=extractor)
    assert "left" in doc.text and "right" in doc.text and len(doc.text) < 5000
    docx = _docx(tmp_path / "levels.docx", (
        f'<w:document xmlns:w="{W}"><w:body><w:p><w:pPr><w:outlineLvl w:val="\u00b2"/></w:pPr><w:r><w:t>odd '
        f'level</w:t></w:r></w:p><w:p><w:pPr><w:outlineLvl w:val="{"9" * 5000}"/></w:pPr><w:r><w:t>huge level'
        "</w:t></w:r></w:p></w:body></w:document>").encode())
    assert "huge level" in extract_document(str(docx), S, extractor=extractor).text
