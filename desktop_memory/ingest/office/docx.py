"""Word .docx (WordprocessingML): body text in reading order, heading paths from the heading styles, tables as
rows, text boxes, then footnotes, endnotes, comments, and the distinct header/footer lines (once each).
"""

from __future__ import annotations

import re
from typing import Any
from xml.etree import ElementTree as ET

from .archive import Package
from .layout import DocumentProblem, TextBuilder, bounded_int

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
DC = "{http://purl.org/dc/elements/1.1/}"
_HEADING_NAME = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)
_SKIP = {W + "rt", W + "delText", W + "instrText", MC + "Fallback", W + "footnoteReference",
         W + "endnoteReference", W + "commentReference"}


def read_docx(path: str) -> dict[str, Any]:
    with Package(path, "Word document") as pkg:
        if not pkg.has("word/document.xml"):
            raise DocumentProblem("not a Word document (the zip holds no word/document.xml)")
        levels = _style_levels(pkg)
        out = TextBuilder()
        body = pkg.xml("word/document.xml").find(W + "body")
        if body is None:
            raise DocumentProblem("corrupt Word document: no document body")
        _blocks(body, out, levels)
        for part, label in (("word/footnotes.xml", "Footnotes"), ("word/endnotes.xml", "Endnotes"),
                            ("word/comments.xml", "Comments")):
            if pkg.has(part):
                _notes(pkg.xml(part), out, label, levels)
        _headers_footers(pkg, out)
        if not out.text().strip() and b"<w:drawing" in pkg.read("word/document.xml"):
            raise DocumentProblem("no text found: the document holds only pictures", "skipped")
        return out.result("document", title=core_title(pkg))


def _headers_footers(pkg: Package, out: TextBuilder) -> None:
    """Header and footer lines, each distinct line once (they repeat on every page)."""
    seen: list[str] = []
    for name in sorted(n for n in pkg.names() if re.fullmatch(r"word/(header|footer)\d*\.xml", n)):
        for p in pkg.xml(name).iter(W + "p"):
            text = " ".join(run_text(p).split())
            if text and text not in seen:
                seen.append(text)
    if seen:
        out.heading(1, "Headers and footers")
        for line in seen:
            out.paragraph(line, tight=True)


def core_title(pkg: Package) -> str | None:
    if not pkg.has("docProps/core.xml"):
        return None
    try:
        node = pkg.xml("docProps/core.xml").find(DC + "title")
    except DocumentProblem:
        return None
    return node.text.strip() if node is not None and node.text and node.text.strip() else None


def _style_levels(pkg: Package) -> dict[str, int]:
    """styleId → heading level, from style names ("heading 2", "Title") and outline levels, through basedOn."""
    if not pkg.has("word/styles.xml"):
        return {}
    names: dict[str, str] = {}
    based: dict[str, str] = {}
    outline: dict[str, int] = {}
    for st in pkg.xml("word/styles.xml").iter(W + "style"):
        sid = st.get(W + "styleId") or ""
        name = st.find(W + "name")
        names[sid] = (name.get(W + "val") or "") if name is not None else ""
        base = st.find(W + "basedOn")
        if base is not None:
            based[sid] = base.get(W + "val") or ""
        lvl = st.find(f"{W}pPr/{W}outlineLvl")
        if lvl is not None and bounded_int(lvl.get(W + "val"), -1, 9) >= 0:
            outline[sid] = bounded_int(lvl.get(W + "val"), 0, 9) + 1
    levels: dict[str, int] = {}
    for sid in names:
        cur, hops = sid, 0
        while cur and hops < 8:
            m = _HEADING_NAME.match(names.get(cur, ""))
            if m:
                levels[sid] = int(m.group(1))
                break
            if names.get(cur, "").lower() == "title":
                levels[sid] = 1
                break
            if cur in outline and outline[cur] <= 9:
                levels[sid] = outline[cur]
                break
            cur, hops = based.get(cur, ""), hops + 1
    return levels


def _blocks(parent: ET.Element, out: TextBuilder, levels: dict[str, int]) -> None:
    for el in parent:
        tag = el.tag
        if tag == W + "p":
            _paragraph(el, out, levels)
        elif tag == W + "tbl":
            _table(el, out)
        elif tag in (W + "sdt", W + "customXml", W + "smartTag"):
            content = el.find(W + "sdtContent") if tag == W + "sdt" else el
            if content is not None:
                _blocks(content, out, levels)
        elif tag == MC + "AlternateContent":
            choice = el.find(MC + "Choice")
            if choice is not None:
                _blocks(choice, out, levels)


def _paragraph(p: ET.Element, out: TextBuilder, levels: dict[str, int]) -> None:
    boxes: list[ET.Element] = []
    text = run_text(p, boxes)
    style = p.find(f"{W}pPr/{W}pStyle")
    level = levels.get(style.get(W + "val") or "") if style is not None else None
    own = p.find(f"{W}pPr/{W}outlineLvl")
    if level is None and own is not None and bounded_int(own.get(W + "val"), 9, 9) < 9:
        level = bounded_int(own.get(W + "val"), 0, 9) + 1
    if level is not None and text.strip():
        out.heading(level, text)
    else:
        out.paragraph(text)
    for box in boxes:  # text boxes anchored in this paragraph follow it
        _blocks(box, out, levels)


def run_text(el: ET.Element, boxes: list[ET.Element] | None = None) -> str:
    """The visible text under ``el``: w:t, tabs and breaks; ruby guides, deleted text, field codes skipped."""
    parts: list[str] = []

    def walk(node: ET.Element) -> None:
        for child in node:
            tag = child.tag
            if tag in _SKIP:
                continue
            if tag == W + "t":
                parts.append(child.text or "")
            elif tag == W + "tab":
                parts.append("\t")
            elif tag in (W + "br", W + "cr"):
                parts.append("\n")
            elif tag == W + "noBreakHyphen":
                parts.append("-")
            elif tag == W + "txbxContent":
                if boxes is not None:
                    boxes.append(child)
            elif tag == W + "p":  # nested paragraphs (inside a cell or note)
                if parts:
                    parts.append("\n")
                walk(child)
            else:
                walk(child)

    walk(el)
    return "".join(parts)


def _table(tbl: ET.Element, out: TextBuilder) -> None:
    for tr in tbl.findall(W + "tr"):
        cells = [run_text(tc).replace("\n", " ") for tc in tr if tc.tag == W + "tc"]
        out.table_row(cells)


def _notes(root: ET.Element, out: TextBuilder, label: str, levels: dict[str, int]) -> None:
    tag = W + ("comment" if label == "Comments" else label.lower()[:-1])
    notes = []
    for note in root.iter(tag):
        if note.get(W + "type") in ("separator", "continuationSeparator", "continuationNotice"):
            continue
        text = run_text(note).strip()
        if text:
            author = note.get(W + "author") if label == "Comments" else None
            notes.append(f"{author}: {text}" if author else text)
    if notes:
        out.heading(1, label)
        for n in notes:
            out.paragraph(n)
