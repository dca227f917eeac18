"""The Library's folder tree (gui/library_view, Qt-free part): subfolders nest, counts roll up, problems-only."""

from __future__ import annotations

import dataclasses

from desktop_memory.models import DocumentInfo, FileOutcome


def _doc(i: int, path: str, status: str = "indexed") -> DocumentInfo:
    return DocumentInfo(i, path, "markdown", status, "bad" if status == "failed" else "", 10, 1.0, 1.0, 2, 2)


def test_library_tree_nests_subfolders_and_rolls_counts_up():
    from desktop_memory.gui.library_tree import TreeSpec, build_tree, walk
    from desktop_memory.library_listing import listing_from_documents
    from desktop_memory.models import LibraryQuery

    docs = [_doc(1, "/r/docs/a.md"), _doc(2, "/r/docs/adv/b.md"), _doc(3, "/r/docs/adv/deep/c.md", "failed"),
            _doc(4, "/r/docs/Zed.md"), _doc(5, "/other/x.md")]
    whole = listing_from_documents(docs, LibraryQuery())
    whole.complete = True
    root = build_tree(whole, {"/r/docs/a.md": FileOutcome("/r/docs/a.md", "unchanged")}, TreeSpec())
    assert sorted(n.path for n in root.children) == ["/other", "/r/docs"]
    top = next(n for n in root.children if n.path == "/r/docs")
    assert [c.path for c in top.children] == ["/r/docs/adv", "/r/docs/a.md", "/r/docs/Zed.md"]  # folders first
    adv = top.children[0]
    assert [c.path for c in adv.children] == ["/r/docs/adv/deep", "/r/docs/adv/b.md"]
    assert top.status == "4 files · 1 failed" and adv.status == "2 files · 1 failed"
    assert top.chunks == 8 and top.problems == 1
    assert sum(1 for n in walk(root) if n.doc is not None) == 5
    only = build_tree(whole, {}, TreeSpec(problems_only=True))
    assert [n.path for n in walk(only) if n.doc is not None] == ["/r/docs/adv/deep/c.md"]



def test_a_folder_whose_vectors_are_not_counted_stays_unknown_when_rolled_up():
    """The store says -1 (not counted) while a long embedding runs (store/doc_listing.py): every folder above says
    so too, instead of a sum that looks exact."""
    from desktop_memory.gui.library_tree import TreeSpec, build_tree
    from desktop_memory.library_listing import listing_from_documents
    from desktop_memory.models import LibraryQuery

    listing = listing_from_documents([_doc(1, "/r/a/x.md"), _doc(2, "/r/a/b/y.md")], LibraryQuery())
    listing.folders = [dataclasses.replace(f, vectors=-1) for f in listing.folders]
    root = build_tree(listing, {}, TreeSpec())
    assert [n.path for n in root.children] == ["/r/a"] and root.children[0].vectors == -1
    assert all(n.vectors == -1 for n in root.children[0].children if n.doc is None)
