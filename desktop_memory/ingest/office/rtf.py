"""RTF: text in reading order with code pages (\\ansicpg, per-font \\fcharset, \\'hh bytes, \\uN), heading paths
from the stylesheet ("heading 1") or \\outlinelevel, table rows, footnotes after the body. A linear-time tokenizer:
no recursion, so deep nesting in a hostile file costs memory for a stack of small tuples, nothing more.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from .layout import DocumentProblem, TextBuilder

_TOKEN = re.compile(rb"\\([a-zA-Z]{1,32})(-?\d{1,10})? ?|\\'([0-9a-fA-F]{2})|\\([^a-zA-Z])|([{}])|([^\\{}\r\n]+)|\r?\n")
_HEADING_NAME = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)
_CHARSETS = {0: "cp1252", 128: "cp932", 129: "cp949", 134: "gbk", 136: "cp950", 161: "cp1253", 162: "cp1254",
             163: "cp1258", 177: "cp1255", 178: "cp1256", 186: "cp1257", 204: "cp1251", 222: "cp874", 238: "cp1250"}
_SKIP_DESTS = {b"fonttbl", b"colortbl", b"stylesheet", b"info", b"pict", b"header", b"footer", b"headerl",
               b"headerr", b"headerf", b"footerl", b"footerr", b"footerf", b"fldinst", b"xmlnstbl", b"listtable",
               b"listoverridetable", b"rsidtbl", b"generator", b"themedata", b"colorschememapping", b"datastore",
               b"latentstyles", b"pgdsctbl", b"filetbl", b"revtbl", b"object", b"bkmkstart", b"bkmkend",
               b"nonshppict", b"shpinst", b"userprops", b"docvar", b"mmathPr", b"panose", b"falt"}
_SYMBOLS = {b"emdash": "—", b"endash": "–", b"bullet": "•", b"lquote": "‘", b"rquote": "’", b"ldblquote": "“",
            b"rdblquote": "”", b"tab": "\t", b"line": "\n", b"emspace": " ", b"enspace": " ", b"qmspace": " "}
_CHAR_SYMBOLS = {b"~": "\u00a0", b"_": "-", b"-": "", b"\\": "\\", b"{": "{", b"}": "}", b"\n": "\n", b"\r": "\n"}


@dataclass(frozen=True)
class _State:
    dest: str = "body"  # "body", "skip", "footnote", "fonttbl", "stylesheet", "title", "result"
    font: int | None = None
    uc: int = 1
    style: int | None = None
    outline: int | None = None


class _Reader:
    def __init__(self) -> None:
        self.out = TextBuilder()
        self.codepage = "cp1252"
        self.fonts: dict[int, str] = {}
        self.styles: dict[int, str] = {}
        self.title = ""
        self.notes: list[str] = []
        self.para: list[str] = []
        self.note: list[str] = []
        self.cells: list[str] = []
        self.pending = bytearray()
        self.skip_chars = 0
        self.style_name: list[str] = []
        self.style_no: int | None = None
        self.font_no: int | None = None

    def flush_bytes(self, st: _State) -> None:
        if self.pending:
            codec = self.fonts.get(st.font, self.codepage) if st.font is not None else self.codepage
            try:
                text = bytes(self.pending).decode(codec, errors="replace")
            except LookupError:
                text = bytes(self.pending).decode("cp1252", errors="replace")
            self.pending.clear()
            self.emit(st, text)

    def emit(self, st: _State, text: str) -> None:
        if st.dest == "body":
            self.para.append(text)
        elif st.dest == "footnote":
            self.note.append(text)
        elif st.dest == "stylesheet":
            self.style_name.append(text)
        elif st.dest == "title":
            self.title += text

    def end_paragraph(self, st: _State) -> None:
        text = "".join(self.para)
        self.para = []
        level = st.outline
        if level is None and st.style is not None:
            m = _HEADING_NAME.match(self.styles.get(st.style, "").strip())
            level = int(m.group(1)) if m else None
        if level is not None and text.strip():
            self.out.heading(level, text)
        else:
            self.out.paragraph(text)

    def run(self, data: bytes) -> dict[str, Any]:
        if not data.lstrip().startswith(b"{\\rtf"):
            raise DocumentProblem("not an RTF document (it does not start with {\\rtf)")
        stack: list[_State] = []
        st = _State()
        for m in _TOKEN.finditer(data):
            word, arg, hexbyte, sym, brace, text = m.groups()
            if hexbyte is None and self.pending:
                self.flush_bytes(st)
            if self.skip_chars and (hexbyte is not None or text):
                if hexbyte is not None:
                    self.skip_chars -= 1
                    continue
                assert text is not None
                cut = min(self.skip_chars, len(text))
                self.skip_chars -= cut
                text = text[cut:]
                if not text:
                    continue
            if brace == b"{":
                stack.append(st)
                if len(stack) > 10_000:
                    raise DocumentProblem("corrupt RTF document: groups nested too deeply")
                if st.dest == "stylesheet":
                    self.style_name, self.style_no = [], None
            elif brace == b"}":
                self._close_group(st, stack[-1] if stack else st)
                st = stack.pop() if stack else st
            elif word is not None:
                st = self._control(word, int(arg) if arg else None, st, data, m.end())
            elif hexbyte is not None:
                if st.dest != "skip":
                    self.pending.append(int(hexbyte, 16))
            elif sym is not None:
                if sym == b"*":
                    st = replace(st, dest="skip") if st.dest in ("body", "footnote") else st
                elif sym in _CHAR_SYMBOLS:
                    self.emit(st, _CHAR_SYMBOLS[sym])
            elif text:
                self.emit(st, text.decode(self.fonts.get(st.font, self.codepage) if st.font is not None
                                          else self.codepage, errors="replace"))
        self.flush_bytes(st)
        if self.para:
            self.end_paragraph(st)
        if self.notes:
            self.out.heading(1, "Footnotes")
            for n in self.notes:
                self.out.paragraph(n)
        return self.out.result("document", title=self.title.strip() or None)

    def _close_group(self, st: _State, outer: _State) -> None:
        self.flush_bytes(st)
        if st.dest == "footnote" and outer.dest != "footnote":
            note = "".join(self.note).strip()
            self.note = []
            if note:
                self.notes.append(note)
        elif st.dest == "stylesheet" and outer.dest == "stylesheet" and self.style_no is not None:
            self.styles[self.style_no] = "".join(self.style_name).split(";")[0]
        elif st.dest == "fonttbl" and self.font_no is not None and outer.dest == "fonttbl":
            self.font_no = None

    def _control(self, word: bytes, arg: int | None, st: _State, data: bytes, pos: int) -> _State:
        if word == b"u" and arg is not None:
            self.emit(st, chr(arg + 65536 if arg < 0 else arg) if 0 <= (arg + 65536 if arg < 0 else arg) < 0x110000
                      else "\ufffd")
            self.skip_chars = st.uc
            return st
        if word == b"uc" and arg is not None:
            return replace(st, uc=max(0, arg))
        if word == b"ansicpg" and arg:
            self.codepage = f"cp{arg}"
            return st
        if word == b"f" and arg is not None:
            if st.dest == "fonttbl":
                self.font_no = arg
                return st
            return replace(st, font=arg)
        if word == b"fcharset" and arg is not None and st.dest == "fonttbl" and self.font_no is not None:
            if arg in _CHARSETS:
                self.fonts[self.font_no] = _CHARSETS[arg]
            return st
        if st.dest == "stylesheet" and word == b"s" and arg is not None:
            self.style_no = arg
            return st
        if word in _SKIP_DESTS:
            dest = {b"fonttbl": "fonttbl", b"stylesheet": "stylesheet"}.get(word, "skip")
            if word == b"info":
                dest = "info"
            return replace(st, dest=dest)
        if word == b"title" and st.dest == "info":
            return replace(st, dest="title")
        if st.dest == "info":
            return replace(st, dest="skip") if word in (b"author", b"operator", b"company", b"subject") else st
        if word == b"footnote":
            return replace(st, dest="footnote")
        if st.dest not in ("body", "footnote"):
            return st
        if word in (b"par", b"sect", b"page") and st.dest == "body":
            self.end_paragraph(st)
        elif word == b"pard":
            return replace(st, style=None, outline=None)
        elif word == b"s" and arg is not None:
            return replace(st, style=arg)
        elif word == b"outlinelevel" and arg is not None:
            return replace(st, outline=arg + 1 if 0 <= arg < 9 else None)
        elif word == b"cell" and st.dest == "body":
            self.cells.append("".join(self.para))
            self.para = []
        elif word == b"row" and st.dest == "body":
            self.out.table_row(self.cells)
            self.cells = []
        elif word in (b"par", b"sect", b"page"):
            self.note.append("\n")
        elif word in _SYMBOLS:
            self.emit(st, _SYMBOLS[word])
        return st


def read_rtf_bytes(data: bytes) -> dict[str, Any]:
    return _Reader().run(data)


def read_rtf(path: str) -> dict[str, Any]:
    with open(path, "rb") as fh:
        return read_rtf_bytes(fh.read())
