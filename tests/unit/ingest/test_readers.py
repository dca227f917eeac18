"""Readers on real files: encodings, binary sniffing, skip/fail reasons, titles, languages, hashing."""

from __future__ import annotations

import codecs
import hashlib
import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from desktop_memory.config import IngestSettings
from desktop_memory.errors import ExtractionError
from desktop_memory.ingest.detect import detect_kind, detect_language, kind_from_name, sniff_binary
from desktop_memory.ingest.encoding import decode_bytes
from desktop_memory.ingest.hashing import hash_file
from desktop_memory.ingest.readers import read_document
from tests.conftest import PDFS

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
S = IngestSettings()


def write(tmp_path: Path, name: str, data: bytes) -> str:
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


def reason_of(path: str, settings: IngestSettings = S) -> tuple[str, str]:
    with pytest.raises(ExtractionError) as info:
        read_document(path, settings)
    return info.value.status, info.value.reason


# -- encodings -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("codec, bom", [
    ("utf-16-le", codecs.BOM_UTF16_LE), ("utf-16-be", codecs.BOM_UTF16_BE),
    ("utf-32-le", codecs.BOM_UTF32_LE), ("utf-32-be", codecs.BOM_UTF32_BE), ("utf-8", codecs.BOM_UTF8),
])
def test_bom_files_decode(tmp_path: Path, codec: str, bom: bytes) -> None:
    text = "Grüße, 世界!\r\nline two\r\n"
    path = write(tmp_path, "bom.txt", bom + text.encode(codec))
    doc = read_document(path, S)
    assert doc.kind == "text"
    assert doc.text == "Grüße, 世界!\nline two\n"  # BOM gone, CRLF normalised


def test_bomless_utf16_is_text_not_binary(tmp_path: Path) -> None:
    path = write(tmp_path, "notes", "plain ascii in utf-16\n".encode("utf-16-le") * 20)
    assert detect_kind(path) == "text"
    assert read_document(path, S).text.startswith("plain ascii in utf-16\n")


def test_invalid_utf8_falls_back_to_cp1252(tmp_path: Path) -> None:
    path = write(tmp_path, "legacy.txt", b"caf\xe9 \x93quoted\x94\r\nold mac\rline")
    doc = read_document(path, S)
    assert doc.text == "café “quoted”\nold mac\nline"
    assert decode_bytes(b"caf\xe9")[1] == "cp1252"
    assert decode_bytes(b"\x81\xe9")[1] == "latin-1"  # cp1252 has holes; latin-1 never fails


def test_decode_strips_nuls_and_reports_encoding() -> None:
    assert decode_bytes(b"a\x00b") == ("ab", "utf-8")
    assert decode_bytes(codecs.BOM_UTF8 + b"x") == ("x", "utf-8-sig")


@hsettings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=2000))
def test_decode_never_fails(data: bytes) -> None:
    text, enc = decode_bytes(data)
    assert "\x00" not in text and "\r" not in text and enc


@hsettings(max_examples=200, deadline=None)
@given(text=st.text())
def test_utf8_roundtrip(text: str) -> None:
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates cannot be in a file
        return
    expected = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    if data.startswith(codecs.BOM_UTF8):
        expected = expected[1:]
    assert decode_bytes(data)[0] == expected


# -- skip / fail reasons -------------------------------------------------------------------------------------


def test_binary_with_nuls_is_skipped(tmp_path: Path) -> None:
    path = write(tmp_path, "blob.txt", b"ELF\x00\x01\x02" + bytes(range(256)) * 10)
    assert reason_of(path) == ("skipped", "binary file (contains NUL bytes)")
    assert detect_kind(write(tmp_path, "blob", b"\x00\x01" * 100)) is None


def test_control_bytes_are_binary() -> None:
    assert sniff_binary(bytes(range(1, 32)) * 20) == "binary file (mostly control bytes)"
    assert sniff_binary(b"\x1b[31mred\x1b[0m log line\n" * 10) is None  # ANSI colours are fine


def test_known_binary_extension(tmp_path: Path) -> None:
    path = write(tmp_path, "img.PNG", b"not really")
    assert reason_of(path) == ("skipped", "binary file (.png)")


def test_empty_and_whitespace_files(tmp_path: Path) -> None:
    assert reason_of(write(tmp_path, "empty.md", b"")) == ("skipped", "empty file")
    assert reason_of(write(tmp_path, "blank.md", b" \n\t\r\n")) == ("skipped", "file contains only whitespace")


def test_missing_file(tmp_path: Path) -> None:
    assert reason_of(str(tmp_path / "gone.md")) == ("failed", "file disappeared while indexing")
    assert reason_of(str(tmp_path / "gone.pdf")) == ("failed", "file disappeared while indexing")


def test_fifo_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    assert reason_of(str(fifo)) == ("skipped", "not a regular file (FIFO)")
    assert detect_kind(fifo) == "text"  # by name; nothing was opened for reading


def test_directory_and_too_large(tmp_path: Path) -> None:
    (tmp_path / "dir.md").mkdir()
    assert reason_of(str(tmp_path / "dir.md")) == ("skipped", "is a folder, not a file")
    big = write(tmp_path, "big.txt", b"a" * 300_000)
    assert reason_of(big, IngestSettings(max_file_mb=0.1)) == ("skipped", "too large: 0.3 MB (limit 0.1 MB)")


def test_garbled_text_is_not_valid(tmp_path: Path) -> None:
    data = bytes([0x81, 0x8D, 0x8F, 0x90, 0x9D, 0x41]) * 200  # undefined in cp1252 → latin-1 C1 controls
    assert reason_of(write(tmp_path, "weird.txt", data)) == (
        "skipped", "not valid text (unknown encoding or binary data)")


def test_permission_denied(tmp_path: Path) -> None:
    if not IS_ROOT:
        path = write(tmp_path, "secret.md", b"# hi\n")
        os.chmod(path, 0)
        assert reason_of(path) == ("failed", "permission denied")
        return
    # root ignores mode bits: check the same code path from a child that dropped to uid 'nobody'
    base = Path(tempfile.mkdtemp(prefix="dm-read-"))
    try:
        base.chmod(0o755)
        md = write(base, "secret.md", b"# hi\n")
        pdf = write(base, "secret.pdf", b"%PDF-1.4\n")
        os.chmod(md, 0)
        os.chmod(pdf, 0)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            out = []
            try:
                os.setgid(65534)
                os.setuid(65534)
                for p in (md, pdf):
                    try:
                        read_document(p, S)
                        out.append(["ok"])
                    except ExtractionError as exc:
                        out.append([exc.status, exc.reason])
            except BaseException as exc:
                out = [repr(exc)]
            os.write(w, json.dumps(out).encode())
            os._exit(0)
        os.close(w)
        with os.fdopen(r) as fh:
            got = json.loads(fh.read())
        os.waitpid(pid, 0)
        assert got == [["failed", "permission denied"], ["failed", "permission denied"]]
    finally:
        import shutil

        shutil.rmtree(base)


# -- kinds, titles, languages --------------------------------------------------------------------------------


def test_markdown_titles(tmp_path: Path) -> None:
    fm = write(tmp_path, "a.md", b"---\ntitle: 'From Front Matter'\n---\n# Heading\n")
    assert read_document(fm, S).title == "From Front Matter"
    toml = write(tmp_path, "b.markdown", b"+++\ntitle = \"Toml\"\n+++\nbody\n")
    assert read_document(toml, S).title == "Toml"
    h1 = write(tmp_path, "c.mdx", b"intro\n```\n# in code\n```\n# Real Title { #real }\n")
    doc = read_document(h1, S)
    assert doc.kind == "markdown" and doc.title == "Real Title"
    assert doc.text.startswith("intro")  # text kept as-is
    assert read_document(write(tmp_path, "d.md", b"no heading\n"), S).title is None


def test_front_matter_stays_in_text(tmp_path: Path) -> None:
    raw = "---\ntitle: T\n---\nBody\n"
    assert read_document(write(tmp_path, "fm.md", raw.encode()), S).text == raw


@pytest.mark.parametrize("name, kind, language", [
    ("x.py", "code", "python"), ("x.tsx", "code", "typescript"), ("x.rs", "code", "rust"),
    ("x.go", "code", "go"), ("x.kt", "code", "kotlin"), ("x.cs", "code", "csharp"), ("x.rb", "code", "ruby"),
    ("x.php", "code", "php"), ("x.swift", "code", "swift"), ("x.scala", "code", "scala"), ("x.sh", "code", "shell"),
    ("x.ps1", "code", "powershell"), ("x.lua", "code", "lua"), ("x.R", "code", "r"), ("x.jl", "code", "julia"),
    ("x.hs", "code", "haskell"), ("x.ml", "code", "ocaml"), ("x.exs", "code", "elixir"), ("x.erl", "code", "erlang"),
    ("x.clj", "code", "clojure"), ("x.dart", "code", "dart"), ("x.sql", "code", "sql"), ("x.scss", "code", "scss"),
    ("x.vue", "code", "vue"), ("x.svelte", "code", "svelte"), ("x.yml", "code", "yaml"), ("x.toml", "code", "toml"),
    ("x.json", "code", "json"), ("x.xml", "code", "xml"), ("x.gradle", "code", "gradle"), ("x.hpp", "code", "cpp"),
    ("Dockerfile", "code", "dockerfile"), ("Dockerfile.dev", "code", "dockerfile"), ("Makefile", "code", "make"),
    ("CMakeLists.txt", "code", "cmake"), ("x.md", "markdown", None), ("x.pdf", "pdf", None),
    ("x.rst", "text", None), ("x.csv", "text", None), ("x.tex", "text", None), ("x.log", "text", None),
])
def test_kinds_by_name(name: str, kind: str, language: str | None) -> None:
    assert kind_from_name(name) == kind
    assert detect_language(name) == language


def test_unknown_extension_sniffed(tmp_path: Path) -> None:
    assert detect_kind(write(tmp_path, "README", b"Just some notes\n")) == "text"
    assert detect_kind(write(tmp_path, "data.xyz", b"\x00\x01binary")) is None
    assert detect_kind(write(tmp_path, "disguised", b"%PDF-1.7\n...")) == "pdf"
    assert detect_kind(tmp_path / "x.png") is None
    doc = read_document(write(tmp_path, "LICENSE", b"MIT License\n"), S)
    assert doc.kind == "text"


def test_code_document_has_language(tmp_path: Path) -> None:
    doc = read_document(write(tmp_path, "main.rs", b"fn main() {}\n"), S)
    assert (doc.kind, doc.language, doc.title) == ("code", "rust", None)


def test_non_ascii_file_name(tmp_path: Path) -> None:
    path = write(tmp_path, "заметки 日本.md", "# Привет\n".encode())
    assert read_document(path, S).title == "Привет"


def test_pdf_routed_to_pdf_reader() -> None:
    pdf = PDFS / "crazyones.pdf"
    doc = read_document(str(pdf), S)
    assert doc.kind == "pdf" and doc.pages == [(1, 0, len(doc.text))]


# -- hashing -------------------------------------------------------------------------------------------------


def test_hashes(tmp_path: Path) -> None:
    data = os.urandom(3 << 20)  # bigger than one read block
    path = write(tmp_path, "h.bin", data)
    assert hash_file(path) == hashlib.blake2b(data, digest_size=16).hexdigest()


def test_hash_file_never_hangs_on_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "swapped.md"
    os.mkfifo(fifo)
    with pytest.raises(ExtractionError, match=r"^not a regular file \(FIFO\)$"):
        hash_file(fifo)
    with pytest.raises(FileNotFoundError):
        hash_file(tmp_path / "missing")
