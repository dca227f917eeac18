"""HTML → main text with h1–h3 heading paths (also the reader of EPUB chapters).

What is left out: scripts, styles, templates, navigation (nav, role=navigation, MediaWiki/blog sidebars and
navboxes), footers, asides, hidden elements. When the page marks its main content (<main>, role=main, or a
single <article>) only that is kept. The declared charset is checked against the bytes (``decode_html``).
"""

from __future__ import annotations

import codecs
import re
from html.parser import HTMLParser

from .layout import TextBuilder, clean_title

_SKIP_TAGS = {"script", "style", "noscript", "template", "nav", "footer", "aside", "select", "button", "svg",
              "math", "iframe", "object", "rt", "rp"}
_SKIP_ROLES = {"navigation", "contentinfo", "search", "complementary", "banner", "menu", "menubar"}
_SKIP_NAMES = {"nav", "navbar", "navbox", "navigation", "sidebar", "menu", "breadcrumb", "breadcrumbs", "toc",
               "mw-navigation", "mw-panel", "mw-head", "vector-header", "catlinks", "printfooter", "mw-editsection",
               "cookie-banner", "share", "social", "related", "comments", "reflist-nav", "mw-jump-link"}
_SKIP_SUFFIXES = ("-nav", "-navigation", "-menu", "-sidebar", "-toc", "-navbox", "-breadcrumbs")
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track",
         "wbr"}
_BLOCKS = {"p", "div", "li", "dd", "dt", "blockquote", "section", "article", "main", "header", "figure",
           "figcaption", "table", "ul", "ol", "dl", "pre", "address", "caption", "body", "center", "details",
           "summary", "tbody", "thead", "tfoot"}
_INLINE = {"rt", "rp", "button", "select", "svg", "math", "script", "style", "noscript", "template", "object",
           "iframe", "span", "a", "sup", "sub", "small", "abbr", "b", "i", "em", "strong", "code", "kbd", "label"}
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_XML_ENCODING = re.compile(rb"""^\s*<\?xml[^>]+encoding\s*=\s*["']([A-Za-z0-9_.:-]+)""")


class _Extractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[tuple[int | None, str, int, bool]] = []  # (heading level, text, main depth, is row)
        self.title = ""
        self._in_title = False
        self._skip: list[str] = []  # stack of skipped element names (nesting of the same name counted)
        self._skip_depth = 0
        self._main = 0  # depth inside main content
        self._main_tags: list[str] = []
        self._pre = 0
        self._cur: list[str] = []
        self._heading: int | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self.saw_main = False
        self.articles = 0

    # -- structure ------------------------------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title" and not self._skip_depth:
            self._in_title = True
        if tag in _VOID:
            if tag == "br" and not self._skip_depth:
                self._text("\n")
            return
        if self._skip_depth:
            if tag == self._skip[-1]:
                self._skip_depth += 1
            return
        a = {k: (v or "") for k, v in attrs}
        if _left_out(tag, a):
            if tag not in _INLINE:  # a left-out block ends the paragraph; a ruby guide or icon does not
                self._flush()
            self._skip.append(tag)
            self._skip_depth = 1
            return
        if tag == "main" or a.get("role", "").lower() == "main" or tag == "article":
            self.saw_main = self.saw_main or tag != "article"
            self.articles += tag == "article"
            self._main_tags.append(tag)
            self._main += 1
        if tag in _HEADINGS:
            self._flush()
            self._heading = _HEADINGS[tag]
        elif tag == "tr":
            self._flush()
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
        elif tag in _BLOCKS:
            self._flush()
        if tag == "pre":
            self._pre += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if self._skip_depth:
            if tag == self._skip[-1]:
                self._skip_depth -= 1
                if not self._skip_depth:
                    self._skip.pop()
            return
        if tag in _HEADINGS:
            self._flush()
            self._heading = None
        elif tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.blocks.append((None, " | ".join(" ".join(c.split()) for c in self._row), self._main, True))
            self._row = None
        elif tag in _BLOCKS:
            self._flush()
        if tag == "pre" and self._pre:
            self._pre -= 1
        if self._main_tags and tag == self._main_tags[-1]:
            self._flush()
            self._main_tags.pop()
            self._main -= 1

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
            return
        if self._skip_depth:
            return
        self._text(data if self._pre else re.sub(r"\s+", " ", data))

    def _text(self, s: str) -> None:
        if self._cell is not None:
            self._cell.append(s)
        else:
            self._cur.append(s)

    def _flush(self) -> None:
        text = "".join(self._cur)
        self._cur = []
        if text.strip():
            self.blocks.append((self._heading, text, self._main, False))

    def close(self) -> None:
        super().close()
        self._flush()


def _left_out(tag: str, a: dict[str, str]) -> bool:
    """Scripts, styles, navigation, page furniture and hidden elements (never the page or its main part)."""
    if tag in ("body", "html", "main") or a.get("role") == "main":
        return False
    return (tag in _SKIP_TAGS or a.get("role", "").lower() in _SKIP_ROLES or "hidden" in a
            or a.get("aria-hidden") == "true" or _navigation_name(a.get("id", ""), a.get("class", "")))


def _navigation_name(ident: str, classes: str) -> bool:
    """id/class tokens that name navigation or page furniture ("navbox", "site-nav"; not "has-sidebar")."""
    for token in f"{ident} {classes}".lower().split():
        if token in _SKIP_NAMES or (token.endswith(_SKIP_SUFFIXES) and not token.startswith(("has-", "with-"))):
            return True
    return False


def html_to_builder(markup: str, out: TextBuilder, *, chapter: str | None = None, as_chapter: bool = False,
                    restrict_main: bool = True) -> str:
    """Lay out one HTML document into ``out``; returns its <title>. Headings h1–h3 become heading lines.

    ``as_chapter`` (EPUB): the document is one chapter under a level-1 title (``chapter`` from the table of
    contents, else its first heading, else its <title>); its own headings move one level down, and a heading
    that repeats the chapter title stays a plain line.
    """
    parser = _Extractor()
    parser.feed(markup)
    parser.close()
    only_main = restrict_main and (parser.saw_main or parser.articles == 1)
    kept = [b for b in parser.blocks if b[2] > 0] if only_main else parser.blocks
    if only_main and not any(t.strip() for _, t, _, _ in kept):
        kept = parser.blocks
    page_title = " ".join(parser.title.split())
    shift = 0
    title = None
    if as_chapter:
        first = next((t for h, t, _, _ in kept if h is not None and h <= 3), None)
        title = clean_title(chapter or first or page_title) or None
        if title:
            out.heading(1, title, in_text=False)
        shift = 1
    for heading, text, _main, is_row in kept:
        if heading is not None and heading + shift <= 3 and clean_title(text) != title:
            out.heading(heading + shift, text)
        elif is_row:
            out.table_row(text.split(" | "))
        else:
            out.paragraph(text)
    return page_title


def declared_charset(data: bytes) -> str | None:
    """The charset a page declares (XML declaration or <meta>), normalised by Python's codec registry."""
    head = data[:4096]
    m = _XML_ENCODING.search(head) or _META_CHARSET.search(head)
    if not m:
        return None
    try:
        return codecs.lookup(m.group(1).decode("ascii", "replace")).name
    except LookupError:
        return None


def decode_html(data: bytes) -> tuple[str, list[str]]:
    """Decode with the declared charset when the bytes agree with it; otherwise detect (and say so)."""
    from ..encoding import bom_encoding, decode_bytes

    if bom_encoding(data):
        return decode_bytes(data)[0], []
    declared = declared_charset(data)
    if declared:
        try:
            return data.decode(declared), []
        except UnicodeDecodeError:
            text, used = _detect(data) or decode_bytes(data)
            return text, [f"declared charset {declared} does not match the bytes; decoded as {used}"]
    return decode_bytes(data)[0], []


def _detect(data: bytes) -> tuple[str, str] | None:
    """Statistical detection (charset-normalizer, when installed) for bytes that contradict their declaration."""
    try:
        import charset_normalizer
    except ImportError:
        return None
    best = charset_normalizer.from_bytes(data).best()
    if best is None:
        return None
    return str(best).replace("\r\n", "\n").replace("\r", "\n"), best.encoding
