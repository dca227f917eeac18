"""Highlighting: the keyword lane's FTS5 matches become marks (stems yes, stop words no), and snippets strip markup
but keep those marks."""

from __future__ import annotations

from desktop_memory.models import ChunkDraft, Location
from desktop_memory.retrieve.highlight import MARK_END, MARK_START, marked_texts, spans
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
    from desktop_memory.gui.formatting import mark_terms, marked_ranges, query_terms, snippet, strip_markup

    terms = query_terms("do the async tasks")
    assert sorted(terms) == ["async", "tasks"]  # stop words are not highlight terms either
    text = strip_markup(mark_terms(MD, terms))
    for noise in ("```", "**", "<abbr", "<strong>", "{*", "///", "`", "](https"):
        assert noise not in text, noise
    assert "TL;DR:" in text and "Tip: Read more" in text and "the docs" in text
    snip = snippet(text, terms, 120)
    assert "…" in snip and MARK_START in snip and len(snip) < len(text)
    plain, runs = marked_ranges(snip)
    assert MARK_START not in plain and MARK_END not in plain and runs
    assert {plain[a:a + n].lower() for a, n in runs} <= {"async", "tasks"}  # each run is a marked term, whole
    assert marked_ranges("a \ue000cut") == ("a cut", [(2, 3)])  # a mark left open at a cut end runs to the end
    assert strip_markup("def f(*args): return `x`", "code") == "def f(*args): return `x`"  # code is content
