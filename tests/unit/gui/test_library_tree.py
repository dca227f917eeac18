"""The Library's tree (gui/library_tree.build_tree): its top rows are the library folders a person added."""

from desktop_memory.gui.library_model import LibraryModel
from desktop_memory.gui.library_tree import TreeSpec, build_tree, listing_from_documents
from desktop_memory.models import DocumentInfo, LibraryQuery


def _doc(i: int, path: str, status: str = "indexed") -> DocumentInfo:
    return DocumentInfo(i, path, "markdown", status, "", 10, 1.0, 1.0, 2, 2)


def _listing(docs: list[DocumentInfo], roots: list[str]):
    listing = listing_from_documents(docs, LibraryQuery())
    listing.complete = True
    listing.roots = roots
    return listing


def test_a_library_folder_without_files_of_its_own_is_the_row_above_its_subfolders():
    docs = [_doc(1, "/home/me/corpus/fastapi/a.md"), _doc(2, "/home/me/corpus/fastapi/advanced/b.md"),
            _doc(3, "/home/me/corpus/pdfs/c.pdf", "failed"), _doc(4, "/home/me/other/d.md")]
    root = build_tree(_listing(docs, ["/home/me/corpus", "/home/me/other"]), {}, TreeSpec())
    assert [n.path for n in root.children] == ["/home/me/corpus", "/home/me/other"]
    corpus = root.children[0]
    assert [n.path for n in corpus.children] == ["/home/me/corpus/fastapi", "/home/me/corpus/pdfs"]
    assert corpus.files == 4 - 1 and corpus.chunks == 6  # rolled up from both subfolders
    assert corpus.status == "3 files · 1 failed"


def test_the_folder_row_says_watching_once_as_the_status_bar_counts_it(qtbot):
    docs = [_doc(1, "/home/me/corpus/fastapi/a.md"), _doc(2, "/home/me/corpus/pdfs/c.pdf")]
    model = LibraryModel()
    model.set_listing(_listing(docs, ["/home/me/corpus"]))
    model.set_watch_states({"/home/me/corpus": "watching"})
    assert model.rowCount() == 1
    top = model.index(0, 0)
    assert top.data() == "/home/me/corpus"
    assert model.index(0, 1).data().endswith("watching")
    children = [model.index(i, 1, top).data() for i in range(model.rowCount(top))]
    assert len(children) == 2


def test_without_library_folders_or_below_none_the_tree_is_as_before():
    docs = [_doc(1, "/a/x/one.md"), _doc(2, "/a/y/two.md")]
    assert [n.path for n in build_tree(_listing(docs, []), {}, TreeSpec()).children] == ["/a/x", "/a/y"]
    # a library folder the filter leaves nothing of is no row of its own
    assert [n.path for n in build_tree(_listing(docs, ["/elsewhere"]), {}, TreeSpec()).children] == ["/a/x", "/a/y"]
    # a library folder holding files itself keeps its one row
    docs.append(_doc(3, "/a/top.md"))
    assert [n.path for n in build_tree(_listing(docs, ["/a"]), {}, TreeSpec()).children] == ["/a"]


def test_subfolders_do_not_repeat_their_library_folders_watch_state(qtbot):
    docs = [_doc(1, "/home/me/notes/a.md"), _doc(2, "/home/me/notes/work/b.md")]
    model = LibraryModel()
    model.set_listing(_listing(docs, ["/home/me/notes"]))
    model.set_watch_states({"/home/me/notes": "paused"})
    top = model.index(0, 0)
    assert model.index(0, 1).data() == "2 files · paused"
    work = [model.index(i, 1, top).data() for i in range(model.rowCount(top))]
    assert "1 file" in work and not any("paused" in (w or "") for w in work)


def test_a_filter_keeps_the_library_folder_row_and_the_machines():
    docs = [_doc(1, "/home/me/corpus/fastapi/a.md"), _doc(2, "/home/me/corpus/pdfs/c.pdf", "failed"),
            _doc(3, "/srv/laptop/notes/d.md", "failed")]
    listing = _listing(docs, ["/home/me/corpus", "/srv/laptop"])
    listing.machines = {"/srv/laptop": "laptop"}
    root = build_tree(listing, {}, TreeSpec(problems_only=True))
    assert [n.path for n in root.children] == ["/home/me/corpus", "/srv/laptop"]  # mine first, then the laptop's
    assert [n.path for n in root.children[0].children] == ["/home/me/corpus/pdfs"]
