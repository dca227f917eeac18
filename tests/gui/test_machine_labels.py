"""A shared library in the window (issue 32 item 3): another machine's result reads "laptop: plan.md", Open and
Reveal on it say in one sentence why not instead of failing, and the Library lists this machine's folders first,
then each other machine's together, named."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from desktop_memory.gui import desktop
from desktop_memory.gui.banner import BannerArea
from desktop_memory.gui.library_model import LibraryModel
from desktop_memory.gui.library_tree import TreeSpec, build_tree, listing_from_documents
from desktop_memory.gui.machine_labels import machine_of, not_here, result_name
from desktop_memory.gui.result_actions import ResultActions
from desktop_memory.gui.results_model import ResultsModel, ResultsView
from desktop_memory.gui.status_bar import StatusBar
from desktop_memory.models import DocumentInfo, LibraryQuery, Location, SearchResult


def _result(rank: int, source: str, machine: str, remote: bool) -> SearchResult:
    return SearchResult(rank=rank, score=1.0 / rank, chunk_id=rank, doc_id=rank, source=source, kind="markdown",
                        text="The harbour bridge opens in spring.", location=Location((), None, 1, 3, 0, 30),
                        lanes={}, machine=machine, remote=remote)


def test_names_and_sentences():
    assert result_name(_result(1, "/home/a/notes/plan.md", "laptop", True)) == "laptop: plan.md"
    assert result_name(_result(1, "/home/a/notes/plan.md", "desktop", False)) == "plan.md"
    machines = {"/home/a/notes": "laptop", "/home/a/notes/deep": "tablet"}
    assert machine_of("/home/a/notes/x.md", machines) == "laptop"
    assert machine_of("/home/a/notes/deep/y.md", machines) == "tablet"
    assert machine_of("/home/a/notes2/x.md", machines) is None
    sentence = not_here("/home/a/notes/plan.md", "laptop")
    assert sentence.endswith("files.") and sentence.count(". ") == 0 and "plan.md is on laptop" in sentence


def test_open_and_reveal_of_another_machines_file_say_why_not(qtbot, monkeypatch):
    opened: list[str] = []
    monkeypatch.setattr(desktop, "open_at", lambda path, *a, **k: opened.append(path) or "default")
    monkeypatch.setattr(desktop, "open_path", lambda path: opened.append(path) or True)
    monkeypatch.setattr(desktop, "reveal_path", lambda path: opened.append(path) or True)
    parent = QWidget()
    qtbot.addWidget(parent)
    model, view, banners = ResultsModel(), ResultsView(parent), BannerArea(parent)
    view.setModel(model)
    actions = ResultActions(model, view, banners=banners, status=StatusBar(parent), copy_context=lambda: None,
                            parent=parent)
    theirs = _result(1, "/home/a/notes/plan.md", "laptop", True)
    model.set_results("harbour", ["harbour"], [theirs])
    assert "laptop: plan.md" in str(model.index(0).data())
    actions.open_row(0)
    actions.reveal_file(theirs.source)
    assert opened == []
    assert banners.texts() == [not_here(theirs.source, "laptop")]
    actions.machines = lambda: {"/srv/shared": "desktop"}  # a Library row of another machine's folder
    actions.open_file("/srv/shared/todo.md")
    assert opened == [] and "todo.md is on desktop" in banners.texts()[-1]


def _doc(i: int, path: str) -> DocumentInfo:
    return DocumentInfo(i, path, "markdown", "indexed", "", 10, 1.0, 1.0, 2, 2)


def test_the_library_groups_folders_by_machine(qtbot):
    docs = [_doc(1, "/a/zeta/x.md"), _doc(2, "/b/alpha/y.md"), _doc(3, "/c/mine/z.md"), _doc(4, "/d/beta/w.md")]
    listing = listing_from_documents(docs, LibraryQuery())
    listing.complete = True
    listing.machines = {"/a/zeta": "laptop", "/b/alpha": "tablet", "/d/beta": "laptop"}
    root = build_tree(listing, {}, TreeSpec())
    assert [n.path for n in root.children] == ["/c/mine", "/a/zeta", "/d/beta", "/b/alpha"]
    assert [n.row for n in root.children] == [0, 1, 2, 3]
    model = LibraryModel()
    model.set_listing(listing)
    names = [model.index(i, 0).data() for i in range(model.rowCount())]
    assert names[0] == "/c/mine" and names[1].startswith("laptop: ") and names[3].startswith("tablet: ")
    listing.machines = {}
    assert [n.path for n in build_tree(listing, {}, TreeSpec()).children] == ["/a/zeta", "/b/alpha", "/c/mine",
                                                                               "/d/beta"]  # one machine: no change


def test_the_settings_dialog_has_the_shared_library_field_and_refuses_a_password(qtbot):
    from desktop_memory.config import Settings
    from desktop_memory.gui.settings import SettingsDialog
    from desktop_memory.gui.tasks import TaskRunner

    dlg = SettingsDialog(Settings(), TaskRunner(max_threads=1, inline=True))
    qtbot.addWidget(dlg)
    field = dlg.editor("db_url")
    assert field.spec.title == "Shared library (PostgreSQL)" and dlg.editor("machine_name") is not None
    field.set_value("postgresql://me:s3cret@server/memory")
    assert not dlg.check()
    assert "PGPASSWORD" in field.problem() and "s3cret" not in field.problem()
    field.set_value("postgresql://me@server/memory?sslmode=verify-full")
    assert dlg.check()
    assert dlg.result_settings().resolved_db_location() == "postgresql://me@server/memory?sslmode=verify-full"
    dlg.restore_btn.click()  # restoring the defaults keeps the library, the shared one too
    assert dlg.result_settings().db_url == "postgresql://me@server/memory?sslmode=verify-full"
