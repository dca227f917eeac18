"""OpenDocument .odt/.odp (content.xml): headings with their outline levels, paragraphs, lists, tables, frames
and text boxes in reading order; footnotes and comments after the body; for presentations one unit per slide
(draw:page) with its title and speaker notes. Macros are never run (we only read content.xml).
"""

from __future__ import annotations

from typing import Any
from xml.etree import ElementTree as ET

from .archive import ENCRYPTED_REASON, Package, article
from .layout import DocumentProblem, TextBuilder, bounded_int

OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
DRAW = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"
PRES = "{urn:oasis:names:tc:opendocument:xmlns:presentation:1.0}"
MAX_SPACES = 1000  # text:s c="N": a run of spaces, not a memory bomb
MANIFEST = "{urn:oasis:names:tc:opendocument:xmlns:manifest:1.0}"
DC = "{http://purl.org/dc/elements/1.1/}"
SVG = "{urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0}"
_CONTAINERS = {TEXT + "section", TEXT + "list", TEXT + "list-item", TEXT + "list-header", DRAW + "frame",
               DRAW + "text-box", DRAW + "g", DRAW + "custom-shape", DRAW + "rect", DRAW + "ellipse",
               TEXT + "index-body", TABLE + "table-header-rows", TABLE + "table-rows", TABLE + "table-row-group"}


def read_odf(path: str, presentation: bool) -> dict[str, Any]:
    what = "OpenDocument presentation" if presentation else "OpenDocument text"
    with Package(path, what) as pkg:
        if pkg.has("META-INF/manifest.xml"):
            manifest = pkg.xml("META-INF/manifest.xml")
            if manifest.find(f".//{MANIFEST}encryption-data") is not None:
                raise DocumentProblem(ENCRYPTED_REASON, "skipped")
        if not pkg.has("content.xml"):
            raise DocumentProblem(f"not {article(what)} (the zip holds no content.xml)")
        body = pkg.xml("content.xml").find(OFFICE + "body")
        if body is None:
            raise DocumentProblem(f"corrupt {what}: content.xml has no body")
        out = TextBuilder()
        notes: list[str] = []
        warnings: list[str] = []
        if pkg.has("Basic") or any(n.startswith(("Basic/", "Scripts/")) for n in pkg.names()):
            warnings.append("contains macros (not run)")
        if presentation:
            furniture = _master_texts(pkg)
            for number, page in enumerate(body.iter(DRAW + "page"), 1):
                out.start_unit(number)
                _slide(page, out, notes)
                for text in furniture.get(page.get(DRAW + "master-page-name") or "", []):
                    out.paragraph(text)
                out.end_unit()
        else:
            for text_root in body:
                _blocks(text_root, out, notes)
            if notes:
                out.heading(1, "Notes and comments")
                for n in notes:
                    out.paragraph(n)
        return out.result("slides" if presentation else "document", title=_meta_title(pkg), warnings=warnings)


def _master_texts(pkg: Package) -> dict[str, list[str]]:
    """Master page name → literal header/footer texts shown on its slides (field placeholders excluded)."""
    if not pkg.has("styles.xml"):
        return {}
    out: dict[str, list[str]] = {}
    style = "{urn:oasis:names:tc:opendocument:xmlns:style:1.0}"
    for master in pkg.xml("styles.xml").iter(style + "master-page"):
        texts = []
        for frame in master.iter(DRAW + "frame"):
            if frame.get(PRES + "class") in ("footer", "header"):
                text = " ".join(inline_text(p, []) for p in frame.iter(TEXT + "p")).strip()
                if text:
                    texts.append(text)
        out[master.get(style + "name") or ""] = texts
    return out


def _meta_title(pkg: Package) -> str | None:
    if not pkg.has("meta.xml"):
        return None
    try:
        node = pkg.xml("meta.xml").find(f".//{DC}title")
    except DocumentProblem:
        return None
    return node.text.strip() if node is not None and node.text and node.text.strip() else None


def _slide(page: ET.Element, out: TextBuilder, notes: list[str]) -> None:
    for el in page:
        if el.tag == PRES + "notes":
            texts = TextBuilder()
            for frame in el.iter(DRAW + "frame"):
                if frame.get(PRES + "class") == "notes":
                    _blocks(frame, texts, notes)
            if texts.text().strip():
                out.paragraph("Notes: " + texts.text())
            continue
        if el.tag == DRAW + "frame" and el.get(PRES + "class") == "title":
            title = " ".join(inline_text(p, notes) for p in el.iter(TEXT + "p"))
            out.heading(1, title)
            continue
        _blocks_one(el, out, notes)


def _blocks(parent: ET.Element, out: TextBuilder, notes: list[str]) -> None:
    for el in parent:
        _blocks_one(el, out, notes)


def _blocks_one(el: ET.Element, out: TextBuilder, notes: list[str]) -> None:
    tag = el.tag
    if tag == TEXT + "h":
        level = el.get(TEXT + "outline-level") or "1"
        out.heading(bounded_int(level, 1, 10), inline_text(el, notes))
    elif tag == TEXT + "p":
        out.paragraph(inline_text(el, notes))
        for frame in el.iter(DRAW + "text-box"):  # text boxes anchored in the paragraph
            _blocks(frame, out, notes)
    elif tag == TABLE + "table":
        for row in el.iter(TABLE + "table-row"):
            cells = [" ".join(inline_text(p, notes) for p in cell.iter(TEXT + "p"))
                     for cell in row if cell.tag == TABLE + "table-cell"]
            out.table_row(cells)
    elif tag in _CONTAINERS or tag.startswith(OFFICE):
        _blocks(el, out, notes)


def inline_text(el: ET.Element, notes: list[str]) -> str:
    """A paragraph's text: spans, links, spaces (text:s), tabs, line breaks; notes and comments moved out."""
    parts: list[str] = [el.text or ""]
    for child in el:
        tag = child.tag
        if tag == TEXT + "s":
            parts.append(" " * bounded_int(child.get(TEXT + "c"), 1, MAX_SPACES))
        elif tag == TEXT + "tab":
            parts.append("\t")
        elif tag == TEXT + "line-break":
            parts.append("\n")
        elif tag == TEXT + "note":
            cite = child.find(TEXT + "note-citation")
            body = child.find(TEXT + "note-body")
            if body is not None:
                mark = (cite.text or "").strip() if cite is not None else ""
                text = " ".join(inline_text(p, notes) for p in body.iter(TEXT + "p"))
                notes.append(f"[{mark}] {text}" if mark else text)
        elif tag == OFFICE + "annotation":
            text = " ".join(inline_text(p, notes) for p in child.iter(TEXT + "p"))
            if text.strip():
                notes.append(f"Comment: {text}")
        elif tag in (DRAW + "frame", DRAW + "a"):
            pass  # images and text boxes: text boxes are read as blocks by the caller
        elif tag in (TEXT + "p", TEXT + "h", SVG + "title", SVG + "desc"):  # inside shapes: keep them apart
            parts.append("\n" + inline_text(child, notes) + "\n")
        else:
            parts.append(inline_text(child, notes))
        parts.append(child.tail or "")
    return "".join(parts)
