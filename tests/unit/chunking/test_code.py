"""Code chunker: line windows that prefer top-level definitions, char cap for minified lines, properties."""

from __future__ import annotations

from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from desktop_memory.chunking import chunk_document
from desktop_memory.config import ChunkSettings
from desktop_memory.models import ExtractedDoc
from tests.support.chunk_contract import chunk_problems


def code(text: str, language: str = "python") -> ExtractedDoc:
    return ExtractedDoc(kind="code", text=text, language=language)


def check(doc: ExtractedDoc, cfg: ChunkSettings | None = None):
    cfg = cfg or ChunkSettings()
    chunks = chunk_document(doc, cfg)
    assert chunk_problems(doc, chunks, cfg) == []
    assert chunk_document(doc, cfg) == chunks
    return chunks


def python_module(n_funcs: int = 12, body_lines: int = 8) -> str:
    parts = ['"""Module docstring."""', "", "import os", ""]
    for i in range(n_funcs):
        parts.append("")
        parts.append(f"def function_{i}(arg):")
        parts.extend(f"    value_{j} = arg + {j}  # line {j}" for j in range(body_lines))
        parts.append("    return value_0")
    return "\n".join(parts) + "\n"


def test_windows_end_at_definitions() -> None:
    text = python_module()
    chunks = check(code(text), ChunkSettings(code_lines=30, code_overlap_lines=5, max_chars=5000))
    assert len(chunks) > 2
    for c in chunks[1:]:
        assert c.text.startswith("def function_"), c.text[:40]
    # clean definition boundaries need no overlap: consecutive chunks do not repeat lines
    for a, b in zip(chunks, chunks[1:]):
        assert a.location.line_end < b.location.line_start


def test_line_numbers_match_the_file() -> None:
    text = python_module()
    lines = text.split("\n")
    for c in check(code(text), ChunkSettings(code_lines=20)):
        first = lines[c.location.line_start - 1]
        assert c.text.split("\n")[0] == first
        assert c.text.split("\n")[-1] == lines[c.location.line_end - 1].rstrip()


def test_overlap_when_no_clean_boundary() -> None:
    text = "\n".join(f"    x{i} = {i}" for i in range(200)) + "\n"  # one long indented block
    chunks = check(code(text), ChunkSettings(code_lines=40, code_overlap_lines=5, max_chars=100_000))
    assert len(chunks) > 4
    assert all(c.location.line_end - c.location.line_start + 1 <= 40 for c in chunks)
    assert chunks[0].text.startswith("    x0 = 0")  # indentation of the first line is kept
    overlaps = [a.location.line_end - b.location.line_start + 1 for a, b in zip(chunks, chunks[1:])]
    assert all(o == 5 for o in overlaps)


def test_minified_single_line_is_split_by_chars() -> None:
    text = "var a=1;" + ";".join(f"function f{i}(x){{return x*{i}}}" for i in range(800)) + "\n"
    assert "\n" not in text.strip()
    chunks = check(code(text, "javascript"), ChunkSettings(max_chars=1400))
    assert len(chunks) >= len(text) // 1400
    assert all(len(c.text) <= 1400 for c in chunks)
    assert all(c.location.line_start == c.location.line_end == 1 for c in chunks)


def test_char_cap_limits_line_windows() -> None:
    text = "\n".join("y = '" + "z" * 190 + "'" for _ in range(100)) + "\n"
    chunks = check(code(text), ChunkSettings(max_chars=1000, code_lines=40))
    assert all(len(c.text) <= 1000 for c in chunks)


def test_blank_and_empty_files() -> None:
    assert check(code("")) == []
    assert check(code("\n\n   \n")) == []
    [c] = check(code("\n\nprint(1)\n\n"))
    assert c.text == "print(1)" and c.location.line_start == 3


CODE_LINES = st.sampled_from([
    "def f(x):", "    return x", "", "class A:", "    pass", "}", "fn main() {", "  let a = 1;", "#[derive(Debug)]",
    "@decorator", "// comment", "\t\tdeep()", "x" * 300, "é" * 50, "   ", "function g() {", "end",
])


@hsettings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lines=st.lists(st.one_of(CODE_LINES, st.text(max_size=50)), max_size=200),
    target=st.integers(10, 800),
    extra=st.integers(0, 800),
    code_lines=st.integers(1, 60),
    overlap=st.integers(0, 10),
)
def test_code_invariants(lines: list[str], target: int, extra: int, code_lines: int, overlap: int) -> None:
    cfg = ChunkSettings(target_chars=target, max_chars=target + extra, code_lines=code_lines,
                        code_overlap_lines=overlap)
    chunks = check(code("\n".join(lines)), cfg)
    for c in chunks:
        assert c.location.line_end - c.location.line_start + 1 <= max(1, code_lines)
