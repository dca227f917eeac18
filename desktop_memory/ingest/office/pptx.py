"""PowerPoint .pptx (PresentationML): per slide, in presentation order, the title (breadcrumb), every shape's
text (groups, tables, SmartArt data) and the speaker notes. Location: "slide N".

Only the parts a slide links to are read; a missing layout/master part (or its rels) does not matter.
"""

from __future__ import annotations

import posixpath
from typing import Any
from xml.etree import ElementTree as ET

from .archive import Package
from .docx import core_title
from .layout import DocumentProblem, TextBuilder

P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
PR = "{http://schemas.openxmlformats.org/package/2006/relationships}"
DGM = "{http://schemas.openxmlformats.org/drawingml/2006/diagram}"
_TITLE_TYPES = {"title", "ctrTitle"}
_SKIP_TYPES = {"sldNum", "dt", "sldImg", "hdr"}


def rels(pkg: Package, part: str) -> dict[str, tuple[str, str]]:
    """rId → (type suffix, absolute part name) for ``part``'s relationships (empty when the rels are missing)."""
    folder, name = posixpath.split(part)
    rels_name = posixpath.join(folder, "_rels", name + ".rels")
    if not pkg.has(rels_name):
        return {}
    out = {}
    for rel in pkg.xml(rels_name).iter(PR + "Relationship"):
        if rel.get("TargetMode") == "External":
            continue
        target = rel.get("Target") or ""
        full = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(folder, target))
        out[rel.get("Id") or ""] = ((rel.get("Type") or "").rsplit("/", 1)[-1], full)
    return out


def read_pptx(path: str) -> dict[str, Any]:
    with Package(path, "PowerPoint presentation") as pkg:
        if not pkg.has("ppt/presentation.xml"):
            raise DocumentProblem("not a PowerPoint presentation (the zip holds no ppt/presentation.xml)")
        pres_rels = rels(pkg, "ppt/presentation.xml")
        order = pkg.xml("ppt/presentation.xml").find(P + "sldIdLst")
        slides = [pres_rels[s.get(R + "id") or ""][1] for s in (order if order is not None else [])
                  if (s.get(R + "id") or "") in pres_rels]
        out = TextBuilder()
        warnings: list[str] = []
        for number, part in enumerate(slides, 1):
            if not pkg.has(part):
                warnings.append(f"slide {number} is missing from the package")
                continue
            out.start_unit(number)
            _slide(pkg, part, out)
            out.end_unit()
        return out.result("slides", title=core_title(pkg), warnings=warnings)


def _slide(pkg: Package, part: str, out: TextBuilder) -> None:
    tree = pkg.xml(part).find(f"{P}cSld/{P}spTree")
    if tree is not None:
        _shapes(tree, out, slide=True)
    slide_rels = rels(pkg, part)
    for kind, target in slide_rels.values():
        if kind == "diagramData" and pkg.has(target):  # SmartArt: its text lives in the diagram data part
            for pt in pkg.xml(target).iter(DGM + "pt"):
                body = pt.find(DGM + "t")
                if body is not None:
                    for para in body.iter(A + "p"):
                        out.paragraph(_para_text(para), tight=True)
    for kind, target in slide_rels.values():
        if kind == "notesSlide" and pkg.has(target):
            notes = pkg.xml(target).find(f"{P}cSld/{P}spTree")
            if notes is not None:
                texts = TextBuilder()
                _shapes(notes, texts, slide=False)
                if texts.text().strip():
                    out.paragraph("Notes: " + texts.text())


def _placeholder(sp: ET.Element) -> str | None:
    ph = sp.find(f"{P}nvSpPr/{P}nvPr/{P}ph")
    return None if ph is None else (ph.get("type") or "body")


def _shapes(tree: ET.Element, out: TextBuilder, *, slide: bool) -> None:
    for el in tree:
        tag = el.tag
        if tag == P + "sp":
            ph = _placeholder(el)
            if ph in _SKIP_TYPES:
                continue
            body = el.find(P + "txBody")
            if body is None:
                continue
            text = "\n".join(_para_text(p) for p in body.iter(A + "p"))
            if slide and ph in _TITLE_TYPES:
                out.heading(1, text)  # the breadcrumb carries it; a title-only slide still gets a chunk
            else:
                out.paragraph(text)
        elif tag == P + "grpSp":
            _shapes(el, out, slide=slide)
        elif tag == P + "graphicFrame":
            for tbl in el.iter(A + "tbl"):
                for tr in tbl.iter(A + "tr"):
                    out.table_row([" ".join(_para_text(p) for p in tc.iter(A + "p")) for tc in tr.iter(A + "tc")])


def _para_text(p: ET.Element) -> str:
    parts = []
    for node in p.iter():
        if node.tag == A + "t":
            parts.append(node.text or "")
        elif node.tag == A + "br":
            parts.append("\n")
    return "".join(parts)
