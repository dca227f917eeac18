"""Hostile PDFs written from scratch: small files that are slow or memory-hungry to extract."""

from __future__ import annotations

import zlib
from pathlib import Path


def _write_pdf(path: Path, objects: dict[int, bytes]) -> Path:
    out = bytearray(b"%PDF-1.4\n")
    offsets: dict[int, int] = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n"
    xref = len(out)
    size = max(objects) + 1
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    out += b"".join(b"%010d 00000 n \n" % offsets[n] for n in range(1, size))
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, xref)
    path.write_bytes(bytes(out))
    return path


_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
_PAGE = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
         b"/Contents 4 0 R >>")


def slow_pdf(path: Path, pages: int = 6000, lines_per_page: int = 400) -> Path:
    """Thousands of pages sharing one content stream of hundreds of text lines: ~1 MB on disk, tens of seconds
    (and ~60 MB of text) to extract. A legitimate file, just far too slow for a small time bound."""
    content = ("BT /F1 6 Tf 10 780 Td "
               + " ".join(f"(slow page line {i}) Tj 0 -1 Td" for i in range(lines_per_page)) + " ET").encode()
    kids = b" ".join(b"%d 0 R" % (5 + i) for i in range(pages))
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % pages,
        3: _FONT,
        4: b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
    }
    for i in range(pages):
        objects[5 + i] = _PAGE
    return _write_pdf(path, objects)


def decompression_bomb_pdf(path: Path, megabytes: int = 512) -> Path:
    """One page whose Flate content stream inflates to ``megabytes`` MB (a few hundred KB on disk)."""
    comp = zlib.compressobj(9)
    data = bytearray(comp.compress(b"BT /F1 12 Tf 72 720 Td (bomb) Tj ET\n"))
    block = b" " * (1 << 20)
    for _ in range(megabytes):
        data += comp.compress(block)
    data += comp.flush()
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [5 0 R] /Count 1 >>",
        3: _FONT,
        4: b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + bytes(data) + b"\nendstream",
        5: _PAGE,
    }
    return _write_pdf(path, objects)
