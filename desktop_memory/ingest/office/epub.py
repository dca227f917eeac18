"""EPUB 2/3: chapters in spine order, each under its title from the table of contents (nav or NCX), then the
chapter's own h1–h3. DRM (Readium LCP, Adobe ADEPT, any encrypted content document) is skipped with that
reason; font obfuscation is not DRM. A missing ``mimetype`` entry is tolerated with a warning.
"""

from __future__ import annotations

import posixpath
from typing import Any
from urllib.parse import unquote
from xml.etree import ElementTree as ET

from .archive import Package
from .html import decode_html, html_to_builder
from .layout import DocumentProblem, TextBuilder, clean_title

OPF = "{http://www.idpf.org/2007/opf}"
DC = "{http://purl.org/dc/elements/1.1/}"
NCX = "{http://www.daisy.org/z3986/2005/ncx/}"
XHTML = "{http://www.w3.org/1999/xhtml}"
EPUB_NS = "{http://www.idpf.org/2007/ops}"
CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
XMLENC = "{http://www.w3.org/2001/04/xmlenc#}"
FONT_OBFUSCATION = {"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"}
_CONTENT_TYPES = {"application/xhtml+xml", "text/html", "application/x-dtbook+xml"}


def read_epub(path: str) -> dict[str, Any]:
    with Package(path, "EPUB e-book") as pkg:
        warnings: list[str] = []
        if not pkg.has("mimetype"):
            warnings.append("invalid OCF: mimetype missing")
        _refuse_drm(pkg)
        if not pkg.has("META-INF/container.xml"):
            raise DocumentProblem("not an EPUB e-book (the zip holds no META-INF/container.xml)")
        rootfile = pkg.xml("META-INF/container.xml").find(f".//{CONTAINER}rootfile")
        opf_path = unquote(rootfile.get("full-path") or "") if rootfile is not None else ""
        if not opf_path or not pkg.has(opf_path):
            raise DocumentProblem("corrupt EPUB e-book: its package document (OPF) is missing")
        opf = pkg.xml(opf_path)
        base = posixpath.dirname(opf_path)
        manifest = {item.get("id") or "": item for item in opf.iter(OPF + "item")}
        titles = _toc_titles(pkg, opf, manifest, base)
        out = TextBuilder()
        spine = opf.find(OPF + "spine")
        chapters = 0
        for ref in spine.iter(OPF + "itemref") if spine is not None else []:
            item = manifest.get(ref.get("idref") or "")
            if item is None or (item.get("media-type") or "") not in _CONTENT_TYPES:
                continue
            href = _join(base, item.get("href") or "")
            if not pkg.has(href):
                warnings.append(f"chapter {href} is missing from the book")
                continue
            markup, notes = decode_html(pkg.read(href))
            warnings += notes
            html_to_builder(markup, out, chapter=titles.get(href), as_chapter=True, restrict_main=False)
            chapters += 1
        if not chapters:
            raise DocumentProblem("corrupt EPUB e-book: its spine lists no readable chapters")
        node = opf.find(f".//{DC}title")
        book_title = node.text.strip() if node is not None and node.text and node.text.strip() else None
        return out.result("ebook", title=book_title, warnings=sorted(set(warnings), key=warnings.index))


def _join(base: str, href: str) -> str:
    return posixpath.normpath(posixpath.join(base, unquote(href.split("#", 1)[0])))


def _refuse_drm(pkg: Package) -> None:
    if pkg.has("META-INF/license.lcpl"):
        raise DocumentProblem("DRM-protected e-book (Readium LCP); it cannot be indexed", "skipped")
    if pkg.has("META-INF/rights.xml"):
        raise DocumentProblem("DRM-protected e-book (Adobe ADEPT); it cannot be indexed", "skipped")
    if not pkg.has("META-INF/encryption.xml"):
        return
    for data in pkg.xml("META-INF/encryption.xml").iter(XMLENC + "EncryptedData"):
        method = data.find(XMLENC + "EncryptionMethod")
        algorithm = method.get("Algorithm") if method is not None else ""
        if algorithm not in FONT_OBFUSCATION:
            raise DocumentProblem("DRM-protected e-book (its content is encrypted); it cannot be indexed", "skipped")


def _toc_titles(pkg: Package, opf: ET.Element, manifest: dict[str, ET.Element], base: str) -> dict[str, str]:
    """Chapter file → its first title in the table of contents (EPUB 3 nav, else the EPUB 2 NCX)."""
    titles: dict[str, str] = {}
    nav = next((i for i in manifest.values() if "nav" in (i.get("properties") or "").split()), None)
    if nav is not None:
        nav_path = _join(base, nav.get("href") or "")
        try:
            root = pkg.xml(nav_path)
        except DocumentProblem:
            root = None
        if root is not None:
            for navel in root.iter(XHTML + "nav"):
                if navel.get(EPUB_NS + "type") not in (None, "toc"):
                    continue
                for a in navel.iter(XHTML + "a"):
                    href = a.get("href") or ""
                    label = clean_title("".join(a.itertext()))
                    if href and label:
                        titles.setdefault(_join(posixpath.dirname(nav_path), href), label)
    if titles:
        return titles
    spine = opf.find(OPF + "spine")
    ncx_item = manifest.get(spine.get("toc") or "") if spine is not None else None
    if ncx_item is None:
        ncx_item = next((i for i in manifest.values() if i.get("media-type") == "application/x-dtbncx+xml"), None)
    if ncx_item is None:
        return titles
    ncx_path = _join(base, ncx_item.get("href") or "")
    try:
        ncx = pkg.xml(ncx_path)
    except DocumentProblem:
        return titles
    for point in ncx.iter(NCX + "navPoint"):
        text_el = point.find(f"{NCX}navLabel/{NCX}text")
        content = point.find(NCX + "content")
        if text_el is not None and content is not None and text_el.text:
            titles.setdefault(_join(posixpath.dirname(ncx_path), content.get("src") or ""), clean_title(text_el.text))
    return titles
