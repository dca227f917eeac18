"""The Library's excluded rows (issue 30 item 4): each exclusion is a row under the nearest folder shown (else at
the top), after the files, with "excluded" and why; filtering keeps it when it matches, "Problems only" hides it; a
folder row removes the folder itself unless a filter is on; an excluded row removes nothing and includes again."""

from __future__ import annotations

from desktop_memory.gui.library_model import LibraryModel
from desktop_memory.gui.library_tree import STATUS_EXCLUDED, TreeSpec, build_tree, walk
from desktop_memory.library_listing import listing_from_documents
from desktop_memory.models import DocumentInfo, LibraryQuery


def _doc(i: int, path: str) -> DocumentInfo:
    return DocumentInfo(i, path, "markdown", "indexed", "", 10, 1.0, 1.0, 2, 2)


DOCS = [_doc(1, "/r/docs/a.md"), _doc(2, "/r/docs/b.md"), _doc(3, "/r/other/c.md")]
EXCLUDED = ["/r/docs/private.md", "/r/big"]


def _listing():
    listing = listing_from_documents(DOCS, LibraryQuery())
    listing.complete = True
    listing.excluded = list(EXCLUDED)
    return listing


def test_excluded_rows_sit_under_the_nearest_folder_shown_and_follow_the_filter():
    root = build_tree(_listing(), {}, TreeSpec())
    assert [n.path for n in root.children] == ["/r/docs", "/r/other", "/r/big"]  # /r has no files: at the top
    docs = root.children[0]
    assert [c.path for c in docs.children] == ["/r/docs/a.md", "/r/docs/b.md", "/r/docs/private.md"]
    private = docs.children[-1]
    assert private.excluded and private.status == STATUS_EXCLUDED and "Include again" in private.reason
    assert docs.status == "2 files"  # not counted as a file
    assert [n.path for n in walk(build_tree(_listing(), {}, TreeSpec(needle="private"))) if n.excluded] == \
        ["/r/docs/private.md"]
    assert not [n for n in walk(build_tree(_listing(), {}, TreeSpec(problems_only=True))) if n.excluded]


def test_a_folder_row_removes_the_folder_and_an_excluded_row_removes_nothing(qtbot):
    model = LibraryModel()
    model.set_listing(_listing())
    folder = next(i for i in model.folder_indexes() if model.node(i).path == "/r/docs")
    assert model.removal_paths(folder) == ["/r/docs"]  # loaded and expanded or not: the folder itself
    assert model.file_paths(folder) == ["/r/docs/a.md", "/r/docs/b.md"]  # F5 re-reads its files
    excluded = next(i for i in model.indexes() if model.node(i).excluded and model.node(i).path == "/r/big")
    assert model.removal_paths(excluded) == [] and model.excluded_paths(excluded) == ["/r/big"]
    assert excluded.siblingAtColumn(1).data() == "excluded" and excluded.data() == "/r/big"
    assert "/r/big" not in {model.node(i).path for i in model.folder_indexes()}
    model.set_spec(needle="a.md")  # filtered: only the matching files go
    folder = next(i for i in model.folder_indexes() if model.node(i).path == "/r/docs")
    assert model.removal_paths(folder) == ["/r/docs/a.md"]
