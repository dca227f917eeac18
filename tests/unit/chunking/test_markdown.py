"""Markdown chunker on real docs (FastAPI, Hugo) and on generated Markdown (hypothesis)."""

from __future__ import annotations

from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from desktop_memory.chunking import BREADCRUMB_MAX_CHARS, chunk_document
from desktop_memory.chunking.markdown import split_sections
from desktop_memory.chunking.mdparse import (
    clean_heading,
    first_h1,
    front_matter_end,
    front_matter_title,
    iter_headings,
)
from desktop_memory.config import ChunkSettings, IngestSettings
from desktop_memory.ingest.readers import read_document
from desktop_memory.models import ExtractedDoc
from tests.conftest import MDDOCS
from tests.support.chunk_contract import chunk_body, chunk_problems


def md(text: str) -> ExtractedDoc:
    return ExtractedDoc(kind="markdown", text=text)


def check(doc: ExtractedDoc, cfg: ChunkSettings | None = None):
    cfg = cfg or ChunkSettings()
    chunks = chunk_document(doc, cfg)
    assert chunk_problems(doc, chunks, cfg) == []
    assert chunk_document(doc, cfg) == chunks
    return chunks


# -- parsing -------------------------------------------------------------------------------------------------


def test_headings_skip_fences_and_strip_anchors() -> None:
    text = (
        "# Title { #title }\n\n```python\n# not a heading\n## nor this\n```\n\n~~~\n# tilde fence\n~~~\n"
        "## Real [link](http://x) `code` ##\n    # indented code, not a heading\n#hashtag is not a heading\n"
        "<!--\n# commented out\n-->\n### Third {#third .cls}\n"
    )
    heads = [(h.level, h.title) for h in iter_headings(text)]
    assert heads == [(1, "Title"), (2, "Real link code"), (3, "Third")]


def test_unclosed_fence_hides_the_rest() -> None:
    assert [h.title for h in iter_headings("# A\n```\n# B\n")] == ["A"]


def test_setext_headings_conservative() -> None:
    text = "Project\n=======\n\nIntro.\n\nUsage\n-----\n\nA list:\n- item\n---\n"
    assert [(h.level, h.title) for h in iter_headings(text)] == [(1, "Project"), (2, "Usage")]


def test_front_matter_yaml_and_toml() -> None:
    yaml_doc = "---\ntitle: \"Hello: World\"\ntags: [a]\n---\n\nBody\n"
    assert front_matter_title(yaml_doc) == "Hello: World"
    assert yaml_doc[front_matter_end(yaml_doc):].strip() == "Body"
    toml_doc = "+++\ntitle = 'Toml Title'\n+++\n# Heading\n"
    assert front_matter_title(toml_doc) == "Toml Title"
    assert first_h1(toml_doc) == "Heading"
    assert front_matter_end("---\nunclosed: yes\n") == 0  # a lone --- is not front matter
    assert front_matter_title("---\nfoo: 1\n---\n") is None


def test_clean_heading() -> None:
    assert clean_heading("Query Parameters { #query-parameters }") == "Query Parameters"
    assert clean_heading("The `highlight` **shortcode** <a id='x'></a>") == "The highlight shortcode"


# -- chunking behaviour --------------------------------------------------------------------------------------


def test_fastapi_query_params_breadcrumbs() -> None:
    doc = read_document(str(MDDOCS / "fastapi/tutorial/query-params.md"), IngestSettings())
    assert doc.title == "Query Parameters"
    chunks = check(doc)
    crumbs = [c.text.split("\n", 1)[0] for c in chunks]
    assert "Query Parameters › Optional parameters" in crumbs
    assert "Query Parameters › Defaults" in crumbs
    assert all("{ #" not in crumb for crumb in crumbs)
    opt = next(c for c in chunks if c.location.heading_path == ("Query Parameters", "Optional parameters"))
    assert opt.text.startswith("Query Parameters › Optional parameters\n\nThe same way")
    assert opt.location.describe().startswith("Query Parameters › Optional parameters · lines ")
    # the URL inside a fenced block survives intact in some chunk
    assert any("http://127.0.0.1:8000/items/?skip=0&limit=10" in c.text for c in chunks)


def test_hugo_front_matter_title_and_no_front_matter_chunk() -> None:
    path = MDDOCS / "hugo/shortcodes/highlight.md"
    doc = read_document(str(path), IngestSettings())
    assert doc.title == "Highlight shortcode"
    chunks = check(doc)
    fm_end = front_matter_end(doc.text)
    assert all(c.location.char_start >= fm_end for c in chunks)
    assert not any("linkTitle:" in chunk_body(c) for c in chunks)
    assert chunks[0].location.heading_path[0] == "Highlight shortcode"


def test_all_real_markdown_docs_satisfy_invariants() -> None:
    cfg = ChunkSettings()
    files = sorted(MDDOCS.rglob("*.md"))
    assert len(files) > 1000
    total = tiny = 0
    for f in files:
        text = f.read_text(encoding="utf-8").replace("\r\n", "\n")
        doc = md(text)
        chunks = chunk_document(doc, cfg)
        assert chunk_problems(doc, chunks, cfg) == [], f
        total += len(chunks)
        tiny += sum(1 for c in chunks if len(chunk_body(c)) < 60)
    assert tiny < total * 0.05  # tiny sections are merged; what is left are tiny whole documents


def test_tiny_sections_merge_under_common_parent() -> None:
    text = "# Guide\n\nIntro.\n\n## A\n\nShort a.\n\n## B\n\nShort b.\n\n### B1\n\nShort b1.\n"
    chunks = check(md(text))
    assert len(chunks) == 1
    [c] = chunks
    assert c.location.heading_path == ("Guide",)
    assert "## A" in c.text and "### B1" in c.text  # merged headings stay visible in the body


def test_big_sections_keep_their_own_breadcrumbs() -> None:
    body = "\n\n".join(f"Sentence number {i} is here to fill space. " * 3 for i in range(8))
    text = f"# Doc\n\n## First\n\n{body}\n\n## Second\n\n{body}\n"
    chunks = check(md(text))
    paths = {c.location.heading_path for c in chunks}
    assert ("Doc", "First") in paths and ("Doc", "Second") in paths
    for c in chunks:
        assert c.text.startswith(" › ".join(c.location.heading_path) + "\n\n")


def test_long_section_windows_have_overlap_and_cap() -> None:
    paras = [f"Para {i}. " + "text " * 50 for i in range(20)]
    text = "# T\n\n## Long\n\n" + "\n\n".join(paras)
    cfg = ChunkSettings(target_chars=700, max_chars=900, overlap_chars=120)
    chunks = check(md(text), cfg)
    assert len(chunks) >= 4
    assert all(len(chunk_body(c)) <= 900 for c in chunks)
    assert all(c.location.heading_path == ("T", "Long") for c in chunks)


def test_huge_url_line_is_split_by_characters() -> None:
    text = "# T\n\n## Links\n\n" + "https://example.com/" + "q" * 6000 + "\n"
    chunks = check(md(text))
    assert len(chunks) >= 5
    assert all(len(chunk_body(c)) <= 1400 for c in chunks)


def test_long_heading_breadcrumb_is_capped() -> None:
    text = "# " + "very long heading " * 30 + "\n\n## " + "second " * 40 + "\n\nBody text.\n"
    [c] = check(md(text))
    crumb = c.text.split("\n", 1)[0]
    assert len(crumb) <= BREADCRUMB_MAX_CHARS and crumb.endswith("…")


def test_heading_only_document_still_indexed() -> None:
    chunks = check(md("# My Project\n"))
    assert [c.text for c in chunks] == ["# My Project"]


def test_front_matter_only_document_has_no_chunks() -> None:
    assert check(md("---\ntitle: Only\n---\n")) == []


def test_sections_parse_paths() -> None:
    text = "pre\n# A\n## B\n### C\n#### D (not a split)\n## E\n"
    paths = [s.path for s in split_sections(text)]
    assert paths == [(), ("A",), ("A", "B"), ("A", "B", "C"), ("A", "E")]


# -- properties ----------------------------------------------------------------------------------------------

WORD = st.sampled_from(["lorem", "ipsum", "Ünïcode", "代码", "x", "42", "end.", "`code`", "[l](u)", "#tag"])


@st.composite
def markdown_docs(draw) -> str:
    blocks: list[str] = []
    if draw(st.booleans()):
        fm = draw(st.sampled_from(["---\ntitle: Front {n}\n---", "+++\ntitle = \"T\"\n+++", "---\na: 1\n---"]))
        blocks.append(fm)
    for _ in range(draw(st.integers(0, 30))):
        kind = draw(st.sampled_from(["h", "h", "p", "p", "p", "fence", "long", "setext", "raw", "list"]))
        if kind == "h":
            level = draw(st.integers(1, 6))
            words = " ".join(draw(st.lists(WORD, min_size=0, max_size=6)))
            anchor = draw(st.sampled_from(["", " { #anchor }", " {#id .c}", " ##"]))
            blocks.append("#" * level + " " + words + anchor)
        elif kind == "p":
            blocks.append(" ".join(draw(st.lists(WORD, min_size=1, max_size=120))))
        elif kind == "fence":
            fence = draw(st.sampled_from(["```", "~~~", "````"]))
            inner = draw(st.lists(st.sampled_from(["# not heading", "## nope", "code()", "", "```"]), max_size=8))
            close = fence if draw(st.integers(0, 9)) else ""  # sometimes unclosed
            blocks.append("\n".join([fence + "python", *inner, close]))
        elif kind == "long":
            blocks.append("https://x.org/" + "y" * draw(st.integers(100, 3000)))
        elif kind == "setext":
            title = " ".join(draw(st.lists(WORD, min_size=1, max_size=4)))
            blocks.append(title + "\n" + draw(st.sampled_from(["===", "---"])))
        elif kind == "list":
            blocks.append("\n".join("- " + w for w in draw(st.lists(WORD, min_size=1, max_size=10))))
        else:
            blocks.append(draw(st.text(max_size=60)))
    sep = draw(st.sampled_from(["\n\n", "\n", "\n\n\n"]))
    return sep.join(blocks)


@st.composite
def chunk_settings(draw) -> ChunkSettings:
    target = draw(st.integers(20, 1200))
    return ChunkSettings(
        target_chars=target,
        max_chars=draw(st.integers(target, target + 600)),
        overlap_chars=draw(st.integers(0, 200)),
    )


@hsettings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=markdown_docs(), cfg=chunk_settings())
def test_generated_markdown_invariants(text: str, cfg: ChunkSettings) -> None:
    check(md(text), cfg)


@hsettings(max_examples=100, deadline=None)
@given(text=st.text(max_size=1500), cfg=chunk_settings())
def test_arbitrary_text_as_markdown(text: str, cfg: ChunkSettings) -> None:
    check(md(text), cfg)
