"""Trim the ICU data library that PySide6's Qt links: keep what Qt's own ICU calls read, drop the rest.

Qt6Core links ICU (``libicuuc``, ``libicui18n``, ``libicudata``) and calls exactly four parts of it (``objdump -T
libQt6Core.so.6``; no other bundled library imports ICU): collation (``ucol_*``: QCollator, the natural sort of
Qt's file dialog), converters (``ucnv_*``: QStringConverter for encodings other than UTF-8/16/32 and Latin-1), case
mapping (``u_strToUpper/Lower``: algorithmic, no data file) and time-zone names (``ucal_*``). ``libicudata`` is a
30.6 MB blob of every locale's display names, units, currencies, transliterators, break-iterator dictionaries,
spoof checks and number spell-out rules, none of which those calls read.

The blob is an ICU "common data" package (``icudt73l.dat`` as a symbol in a shared library): a header, a table of
contents sorted by name, then the items, each 16-byte aligned. ``trim_package`` keeps the items ``keep`` accepts,
byte for byte; ``build_library`` wraps the result in a new ``libicudata.so.73`` exporting the same symbol (``gcc``
assembles it with ``.incbin``). ICU answers a lookup of a dropped item with a "missing resource" error, which Qt
handles (a collator for an unknown locale falls back to the root collation; a display name to the zone's ID).
"""

from __future__ import annotations

import re
import struct
import subprocess
import tempfile
from pathlib import Path

# Kept, by item name inside the package (after "icudt73l/"):
#  coll/*           every collation (QCollator for the user's locale), with its root and UCA data
#  *.cnv < 32 KB    the single-byte converters (windows-125x, ISO-8859-x, KOI8, Mac, IBM PC code pages) and the
#                   alias table (QStringConverter by name). Not the 35 large multi-byte tables (Shift-JIS, GB18030,
#                   Big5, EUC, EBCDIC DBCS: 4.6 MB): the app decodes files in Python and never through Qt
#  *.nrm, u*.icu    normalisation and character-property data that the kept services use internally
#  non-locale .res  supplementalData, likelySubtags, zoneinfo64, metaZones, timezoneTypes, windowsZones,
#                   keyTypeData, pool/res_index, root/en (the fallback chain of any locale lookup)
_DROP_TREES = ("brkitr/", "curr/", "lang/", "region/", "unit/", "zone/", "translit/", "rbnf/")
_DROP_FILES = re.compile(r"\.(spp|cfu)$|^unames\.icu$")  # stringprep profiles, spoof checks, character names
_LOCALE_RES = re.compile(r"^[a-z]{2,3}(_[A-Za-z0-9]+)*\.res$")  # top-level locale data (dates, numbers, names)
_MAX_CONVERTER = 32 * 1024
_KEEP_LOCALES = {"root.res", "en.res", "en_US.res", "en_US_POSIX.res", "res_index.res", "pool.res"}


def keep(item: str, size: int) -> bool:
    """Whether Qt's ICU calls may read this package item (name without the package prefix, size in bytes)."""
    if item.startswith(_DROP_TREES) or _DROP_FILES.search(item):
        return False
    if item.endswith(".cnv"):
        return size < _MAX_CONVERTER
    if "/" not in item and _LOCALE_RES.match(item):
        return item in _KEEP_LOCALES
    return True


def read_items(data: bytes) -> tuple[bytes, list[tuple[str, bytes]]]:
    """(header, [(name, item bytes)]) of a little-endian ICU common data package."""
    header_size, magic1, magic2 = struct.unpack_from("<HBB", data, 0)
    if (magic1, magic2) != (0xDA, 0x27) or data[12:16] != b"CmnD":
        raise ValueError("not an ICU common data package (CmnD)")
    toc = data[header_size:]
    (count,) = struct.unpack_from("<I", toc, 0)
    entries = [struct.unpack_from("<II", toc, 4 + 8 * i) for i in range(count)]
    items = []
    for i, (name_off, data_off) in enumerate(entries):
        name = toc[name_off:toc.index(b"\0", name_off)].decode("ascii")
        end = entries[i + 1][1] if i + 1 < count else len(toc)
        items.append((name, toc[data_off:end]))
    return data[:header_size], items


def write_items(header: bytes, items: list[tuple[str, bytes]]) -> bytes:
    """A package with these items, in the given (sorted) order; every item 16-byte aligned as ICU expects."""
    count = len(items)
    names = b""
    name_offs = []
    base = 4 + 8 * count
    for name, _ in items:
        name_offs.append(base + len(names))
        names += name.encode("ascii") + b"\0"
    pos = base + len(names)
    pad = (-(len(header) + pos)) % 16
    body = bytearray(b"\xaa" * pad)
    pos += pad
    data_offs = []
    for _, blob in items:
        data_offs.append(pos)
        body += blob
        fill = (-len(blob)) % 16
        body += b"\0" * fill
        pos += len(blob) + fill
    toc = struct.pack("<I", count) + b"".join(struct.pack("<II", n, d) for n, d in zip(name_offs, data_offs))
    return header + toc + names + bytes(body)


def package_from_library(lib: Path) -> tuple[str, bytes]:
    """(symbol, package bytes) of libicudataNN's single exported data symbol (icudtNN_dat)."""
    out = subprocess.run(["readelf", "-sW", "--dyn-syms", str(lib)], capture_output=True, text=True, check=True)
    sym = next(line.split() for line in out.stdout.splitlines() if re.search(r"\bicudt\d+_dat\b", line))
    value, size, name = int(sym[1], 16), int(sym[2], 0), sym[7]
    sections = subprocess.run(["readelf", "-SW", str(lib)], capture_output=True, text=True, check=True).stdout
    rodata = next(line for line in sections.splitlines() if " .rodata " in line).split()
    i = rodata.index(".rodata")
    addr, off = int(rodata[i + 2], 16), int(rodata[i + 3], 16)
    raw = lib.read_bytes()
    start = off + (value - addr)
    return name, raw[start:start + size]


def build_library(lib: Path, symbol: str, package: bytes) -> None:
    """Replace ``lib`` by a shared library exporting ``symbol`` = ``package`` (same soname, read-only data)."""
    with tempfile.TemporaryDirectory() as tmp:
        dat = Path(tmp) / "icudt.dat"
        dat.write_bytes(package)
        asm = Path(tmp) / "icudt.S"
        asm.write_text(
            f'\t.section .rodata\n\t.globl {symbol}\n\t.type {symbol}, @object\n\t.balign 16\n{symbol}:\n'
            f'\t.incbin "{dat}"\n\t.size {symbol}, . - {symbol}\n\t.section .note.GNU-stack,"",@progbits\n')
        out = Path(tmp) / lib.name
        subprocess.run(["gcc", "-shared", "-nostdlib", f"-Wl,-soname,{lib.name}", "-Wl,-s", "-o", str(out),
                        str(asm)], check=True)
        out.replace(lib)


def trim_library(lib: Path) -> tuple[int, int, int, int]:
    """Trim ``lib`` in place; (items before, items kept, bytes before, bytes after)."""
    before = lib.stat().st_size
    symbol, package = package_from_library(lib)
    header, items = read_items(package)
    prefix = items[0][0].split("/", 1)[0] + "/"
    kept = [(n, b) for n, b in items if keep(n[len(prefix):] if n.startswith(prefix) else n, len(b))]
    new = write_items(header, kept)
    # the new package must read back to the same items
    if read_items(new)[1] != [(n, b + b"\0" * ((-len(b)) % 16)) for n, b in kept]:
        raise RuntimeError("the trimmed ICU package does not read back")
    build_library(lib, symbol, new)
    return len(items), len(kept), before, lib.stat().st_size
