"""Daily-driver polish, Qt-free parts: keyword-lane highlights from FTS5, markup-free snippets, weak-match
packing, the Library's folder tree, "open with" commands."""

from __future__ import annotations

import dataclasses

from desktop_memory.config import Settings
from desktop_memory.models import ChunkDraft, DocumentInfo, FileOutcome, LaneHit, Location, SearchResult
from desktop_memory.retrieve.highlight import MARK_END, MARK_START, marked_texts, spans
from desktop_memory.service import MemoryService, strong_only
from desktop_memory.store import Store

MD = """Concurrency › In a hurry?

<abbr title="too long; didn't read"><strong>TL;DR:</strong></abbr> If you **don't** know, use `async def`:

```Python
results = await some_library()
```

/// tip | Read more
See [the docs](https://example.org/async) for running tasks.
///

{* ../docs_src/async/app.py hl[3] *}
"""


def _store(tmp_path, texts: list[str]) -> Store:
    store = Store(tmp_path / "h.db")
    store.write_document(path="/lib/docs/a.md", kind="markdown", language=None, title=None, size=1, mtime=1.0,
                         content_hash="x",
                         chunks=[ChunkDraft(t, Location(char_start=0, char_end=len(t))) for t in texts],
                         dedupe_keys=[str(i) for i in range(len(texts))])
    return store


def test_highlights_are_what_fts5_matched_stems_yes_stop_words_no(tmp_path):
    store = _store(tmp_path, [MD, "Nothing relevant in this one."])
    ids = [cid for (cid,) in store.conn.execute("select id from chunks order by id")]
    marked = marked_texts(store, "how do the tasks run", ids)
    assert list(marked) == [ids[0]]  # the second chunk matches no query term: absent
    plain, found = spans(marked[ids[0]])
    assert plain == MD  # marks only: the text itself is untouched
    words = {plain[a:b].lower() for a, b in found}
    assert words == {"tasks", "running"}, words  # Porter stems: "run" matched "running"
    assert "don't" not in words and "the" not in words and "do" not in words  # stop words never lit up
    assert marked_texts(store, "   ", ids) == {} and marked_texts(store, "tasks", []) == {}


def test_snippets_strip_markup_but_keep_marks():
    from desktop_memory.gui.formatting import mark_terms, marked_html, query_terms, snippet, strip_markup

    terms = query_terms("do the async tasks")
    assert sorted(terms) == ["async", "tasks"]  # stop words are not highlight terms either
    text = strip_markup(mark_terms(MD, terms))
    for noise in ("```", "**", "<abbr", "<strong>", "{*", "///", "`", "](https"):
        assert noise not in text, noise
    assert "TL;DR:" in text and "Tip: Read more" in text and "the docs" in text
    snip = snippet(text, terms, 120)
    assert "…" in snip and MARK_START in snip and len(snip) < len(text)
    html = marked_html(snip, "font-weight:600;")
    assert html.count("<span") == html.count("</span>") >= 1
    assert strip_markup("def f(*args): return `x`", "code") == "def f(*args): return `x`"  # code is content


def test_weak_results_stay_out_of_the_context_unless_asked(tmp_path):
    def r(rank: int, strength: str) -> SearchResult:
        return SearchResult(rank, 0.1, rank, 1, f"/lib/docs/f{rank}.md", "markdown", f"text {rank}", Location(),
                            {"dense": LaneHit(rank, 0.2)}, strength=strength)

    results = [r(1, "strong"), r(2, "weak"), r(3, "weak")]
    assert [x.rank for x in strong_only(results)] == [1]
    assert [x.rank for x in strong_only(results, include_weak=True)] == [1, 2, 3]


def test_service_context_names_sources_relative_to_the_indexed_folder(tmp_path):
    from desktop_memory.embed.hashing import HashEmbedder

    folder = tmp_path / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "plan.md").write_text("# Plan\n\nThe launch plan names every milestone.\n", encoding="utf-8")
    svc = MemoryService(Settings(), db_path=tmp_path / "m.db", embedder=HashEmbedder(64))
    try:
        svc.index_paths([folder])
        rep = svc.context("launch milestone", backend="keyword")
        assert rep.text.startswith("[Source: notes/sub/plan.md"), rep.text  # the default: no /home/<user>/…
        assert str(tmp_path) not in rep.text
        assert rep.items[0].source == str(folder / "sub" / "plan.md")  # the app keeps the absolute path
        svc.apply_settings(dataclasses.replace(svc.settings, context=dataclasses.replace(
            svc.settings.context, path_style="absolute")))
        assert svc.context("launch milestone", backend="keyword").text.startswith(f"[Source: {folder}/sub/plan.md")
        svc.apply_settings(dataclasses.replace(svc.settings, context=dataclasses.replace(
            svc.settings.context, path_style="relative")))
        hit = svc.search("launch milestone", backend="keyword")
        svc.remove_paths([folder])  # no root known (as while a folder is still being read) ...
        assert svc.build_context(hit, 500).text.startswith("[Source: plan.md")  # ... the file name, never more
        assert svc.build_context(hit, 500, extra_roots=[str(folder)]).text.startswith("[Source: notes/sub/plan.md")
        svc.index_paths([folder])
        rep = svc.context("launch milestone", backend="keyword")
        marked = svc.highlights("launch milestones", [rep.items[0].chunk_id])
        assert MARK_START + "launch" + MARK_END in marked[rep.items[0].chunk_id]
    finally:
        svc.close()


def _doc(i: int, path: str, status: str = "indexed") -> DocumentInfo:
    return DocumentInfo(i, path, "markdown", status, "bad" if status == "failed" else "", 10, 1.0, 1.0, 2, 2)


def test_library_tree_nests_subfolders_and_rolls_counts_up():
    from desktop_memory.gui.library_view import TreeSpec, build_tree, walk

    docs = [_doc(1, "/r/docs/a.md"), _doc(2, "/r/docs/adv/b.md"), _doc(3, "/r/docs/adv/deep/c.md", "failed"),
            _doc(4, "/r/docs/Zed.md"), _doc(5, "/other/x.md")]
    root = build_tree(docs, {"/r/docs/a.md": FileOutcome("/r/docs/a.md", "unchanged")}, TreeSpec())
    assert sorted(n.path for n in root.children) == ["/other", "/r/docs"]
    top = next(n for n in root.children if n.path == "/r/docs")
    assert [c.path for c in top.children] == ["/r/docs/adv", "/r/docs/a.md", "/r/docs/Zed.md"]  # folders first
    adv = top.children[0]
    assert [c.path for c in adv.children] == ["/r/docs/adv/deep", "/r/docs/adv/b.md"]
    assert top.status == "4 files · 1 failed" and adv.status == "2 files · 1 failed"
    assert top.chunks == 8 and top.problems == 1
    assert sum(1 for n in walk(root) if n.doc is not None) == 5
    only = build_tree(docs, {}, TreeSpec(problems_only=True))
    assert [n.path for n in walk(only) if n.doc is not None] == ["/r/docs/adv/deep/c.md"]


def test_open_with_commands_fill_placeholders_without_a_shell():
    from desktop_memory.gui.desktop import command_args

    assert command_args("code --goto {path}:{line}", "/a b/c.md", 12) == ["code", "--goto", "/a b/c.md:12"]
    assert command_args("okular --page {page} {path}", "/x.pdf", None, 7) == ["okular", "--page", "7", "/x.pdf"]
    assert command_args("gedit", "/x; rm -rf ~") == ["gedit", "/x; rm -rf ~"]  # the path is one argument
    assert command_args('bad "quote', "/x") is None and command_args("", "/x") is None


def test_a_library_read_but_not_yet_embedded_still_has_strong_keyword_matches(tmp_path):
    from desktop_memory.embed.hashing import HashEmbedder

    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "plan.md").write_text("# Plan\n\nThe launch plan names every milestone.\n", encoding="utf-8")
    (folder / "other.md").write_text("# Other\n\nGardening notes about tomatoes.\n", encoding="utf-8")
    svc = MemoryService(Settings(), db_path=tmp_path / "m.db", embedder=HashEmbedder(64))
    try:
        svc.index_paths([folder], embed=False)  # the window reads first and embeds later
        with svc.writing() as store:  # ...and the embedding job has just started: the model is recorded, no vectors
            store.ensure_model(svc.embedder.model_id, svc.embedder.dim)
        out = svc.search_outcome("launch plan milestone", backend="hybrid")
        assert out.results and out.results[0].strength == "strong" and not out.weak
    finally:
        svc.close()
