"""Issue 23 §6: a damaged PDF's reason in plain words, not the parser's ("Non-Ascii85 digit found: ±")."""

from __future__ import annotations

import pytest

from desktop_memory.errors import ExtractionError
from desktop_memory.ingest.pdf import build_pdf_doc, plain_reason

RAW = [
    ("corrupt PDF: Non-Ascii85 digit found: ±", "a compressed part of the file is damaged"),
    ("corrupt PDF: Invalid dictionary construct: [/'Water', 32, 0, /'Off', <PDFObjRef:33>]",
     "its internal structure is damaged"),
    ("corrupt PDF: Unexpected EOF", "cut short"),
]


@pytest.mark.parametrize("raw, words", RAW)
def test_a_parsers_message_becomes_plain_words(raw: str, words: str) -> None:
    reply = {"ok": False, "status": "failed", "reason": raw}
    with pytest.raises(ExtractionError) as info:
        build_pdf_doc(reply)  # the worker's reply, as the sandbox sends it
    reason = info.value.reason
    assert reason.startswith("corrupt PDF: ") and words in reason
    assert not any(c in reason for c in "[]<>/±'"), reason


@pytest.mark.parametrize("kept", ["corrupt PDF: the document has no pages", "corrupt PDF: the PDF parser crashed "
                                  "(SIGABRT)", "password-protected PDF (encrypted); remove the password to index it"])
def test_reasons_written_for_people_are_kept(kept: str) -> None:
    assert plain_reason(kept) == kept
