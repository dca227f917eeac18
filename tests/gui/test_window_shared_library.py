"""The real window on a shared PostgreSQL library (issue 32 item 3) on a real server (tests/support/postgres.py),
with the real service: this machine ("desktop") and another ("laptop": its own config folder, so its own machine
id) share the library. Search shows both machines' passages and names the laptop's ("laptop: plan.md"); Open and
Reveal on the laptop's file say why not; the Library lists this machine's folder first, then the laptop's, named;
Settings ▸ Library shows the shared library, and its password is never shown nor written to settings.toml."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from desktop_memory.config import Settings, settings_path
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.gui.machine_labels import not_here
from desktop_memory.service import MemoryService
from tests.support.postgres import pg_server, pg_url  # noqa: F401

from .helpers import drop, search, wait_job


def _no_password(url: str) -> str:
    """pgserver's URL names the user with an empty password ("postgres:@"): the settings file takes no password."""
    return url.replace("postgres:@", "postgres@")


def _note(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "plan.md").write_text(f"# Plan\n\n{text}\n", encoding="utf-8")
    return folder


@pytest.fixture
def shared(pg_url, tmp_path, monkeypatch):  # noqa: F811
    """A library on the server where the laptop indexed its notes, then went away (its files are not here)."""
    url = _no_password(pg_url)
    own_config = os.environ["DESKTOP_MEMORY_CONFIG_DIR"]
    monkeypatch.setenv("DESKTOP_MEMORY_CONFIG_DIR", str(tmp_path / "laptop-config"))
    laptop_notes = _note(tmp_path / "laptop" / "notes", "Tomatoes need sun and water every morning.")
    lap = MemoryService(Settings(machine_name="laptop"), db_path=url, embedder=HashEmbedder(64))
    try:
        assert lap.index_paths([laptop_notes]).indexed == 1
    finally:
        lap.close()
    shutil.rmtree(laptop_notes.parent)  # on the laptop's disk, not this one's
    monkeypatch.setenv("DESKTOP_MEMORY_CONFIG_DIR", own_config)  # back to this machine's config folder
    return url, laptop_notes


def _factory(settings: Settings) -> MemoryService:
    return MemoryService(settings, embedder=HashEmbedder(64))


def test_the_window_on_a_shared_library_names_the_other_machine(qtbot, make_window, opened, shared, tmp_path):
    url, laptop_notes = shared
    desk_notes = _note(tmp_path / "desk" / "notes", "The harbour bridge opens in spring; tomatoes wait.")
    w = make_window(_factory, Settings(db_url=url, machine_name="desktop"))
    drop(w, [desk_notes])
    summary = wait_job(qtbot, w)
    assert summary is not None and summary.indexed == 1 and summary.failed == 0

    search(qtbot, w, "tomatoes sun water")
    results = w.results_model.results()
    assert {r.source for r in results} == {str(laptop_notes / "plan.md"), str(desk_notes / "plan.md")}
    theirs = next(i for i, r in enumerate(results) if r.remote)
    assert results[theirs].machine == "laptop"
    assert "laptop: plan.md" in str(w.results_model.index(theirs).data())
    ours = 1 - theirs
    assert not results[ours].remote and "laptop" not in str(w.results_model.index(ours).data())
    # the preview shows the laptop's passage from the library (its file is not on this disk)
    w.results_view.setCurrentIndex(w.results_model.index(theirs))
    qtbot.waitUntil(lambda: "Tomatoes need sun" in w.preview.browser.toPlainText(), timeout=10000)
    assert w.preview.title.text() == "laptop: plan.md"  # the preview names the machine too (it said "plan.md")
    rows = w.context_panel.rows  # the prompt context's list of passages names it too (it said "plan.md")
    qtbot.waitUntil(lambda: rows.rowCount() == 2, timeout=10000)
    texts = [str(rows.index(i, 0).data()) for i in range(rows.rowCount())]
    assert sum("laptop: plan.md" in t for t in texts) == 1 and sum("laptop" in t for t in texts) == 1, texts

    # Open and Reveal on the laptop's file say why not, in one sentence, and launch nothing
    sentence = not_here(str(laptop_notes / "plan.md"), "laptop")
    w.actions_.open_row(theirs)
    assert w.banners.texts()[-1] == sentence
    w.preview.reveal_btn.click()
    w.preview.open_btn.click()
    assert opened == [] and w.banners.texts().count(sentence) >= 1
    assert not any("no longer exists" in t for t in w.banners.texts())  # not mistaken for a deleted file
    w.actions_.open_row(ours)  # this machine's own file opens
    assert opened and opened[-1][1] == str(desk_notes / "plan.md")

    # the Library: this machine's folder first, then the laptop's, named
    model = w.library.model
    qtbot.waitUntil(lambda: model.rowCount() == 2, timeout=10000)
    folders = [str(model.index(i, 0).data()) for i in range(model.rowCount())]
    assert "laptop" not in folders[0] and folders[1].startswith("laptop: ")
    assert model.machines() == {str(laptop_notes): "laptop"}


def test_settings_shows_the_shared_library_and_never_its_password(qtbot, make_window, shared, monkeypatch):
    url, _laptop_notes = shared
    w = make_window(_factory, Settings(db_url=url, machine_name="desktop"))
    qtbot.waitUntil(lambda: w.stats is not None and w.stats.documents.get("indexed") == 1, timeout=15000)
    assert "postgresql://" in w.stats.db_path
    dlg = w.show_settings()
    dlg.show_page("")  # the Library page
    field = dlg.editor("db_url")
    assert field.value() == url and field.spec.title == "Shared library (PostgreSQL)"
    assert dlg.editor("machine_name").value() == "desktop"
    # the default database file is not the library open now (it said "Default (open now): …memory.db")
    assert "open now" not in dlg.editor("db_path").edit.placeholderText()
    # a password typed into the field is refused at the field, and nothing is saved
    field.set_value(url.replace("postgres@", "postgres:s3cret@"))
    assert not dlg.check() and "s3cret" not in field.problem()
    field.set_value(url)
    assert dlg.check()
    dlg.accept()
    saved = settings_path().read_text(encoding="utf-8")
    assert url in saved and "s3cret" not in saved


def test_a_url_with_a_password_on_the_command_line_opens_and_the_password_stays_out_of_sight(
        qtbot, make_window, shared, monkeypatch):
    """``desktop-memory-gui --db postgresql://me:secret@…`` (docs/SHARED.md: a --db URL may carry a password). Old
    app.py put the whole URL in the settings, whose rule refuses a password there: the window could not open the
    library, and the Settings dialog would have shown the password."""
    from desktop_memory.gui.app import with_db_argument

    url, _laptop_notes = shared
    monkeypatch.setenv("PGPASSWORD", "")  # (so the environment is restored as it was after the test)
    monkeypatch.delenv("PGPASSWORD")
    given = url.replace("postgres@", "postgres:s3cret@")  # the test server trusts local connections
    settings = with_db_argument(Settings(machine_name="desktop"), given)
    assert settings.db_url == url and os.environ["PGPASSWORD"] == "s3cret"
    w = make_window(_factory, settings)
    qtbot.waitUntil(lambda: w.stats is not None and w.stats.documents.get("indexed") == 1, timeout=15000)
    assert "s3cret" not in w.stats.db_path and "s3cret" not in w.windowTitle()
    dlg = w.show_settings()
    assert dlg.editor("db_url").value() == url
    dlg.reject()
    w.close()  # the window keeps its state in the settings file as it closes
    saved = settings_path().read_text(encoding="utf-8")
    assert "s3cret" not in saved and "PGPASSWORD" not in saved


def test_re_index_all_on_a_machine_without_folders_leaves_the_others_alone(qtbot, make_window, shared):
    """Library ▸ Re-index all on a machine that only searches the shared library: nothing of the laptop's is read
    here (its files are not on this disk), and no error is shown."""
    url, _laptop_notes = shared
    w = make_window(_factory, Settings(db_url=url, machine_name="desktop"))
    qtbot.waitUntil(lambda: w.library.model.document_count() == 1, timeout=15000)
    w.reindex_all()
    qtbot.wait(500)
    wait_job(qtbot, w)
    texts = [*w.banners.texts(), w.progress.current.full_text() if w.progress.isVisible() else ""]
    assert not any("laptop" in t or "failed" in t or "no longer" in t for t in texts), texts
    assert w.svc.stats().documents == {"indexed": 1}


def test_a_library_named_by_the_environment_is_shown_in_settings_without_its_password(qtbot, make_window, shared,
                                                                                     monkeypatch):
    """DESKTOP_MEMORY_DB (an MCP client's or a script's way) may carry a password: the window opens that library,
    and Settings ▸ Library says it is the one open — without the password, and without calling the default
    database file open."""
    url, _laptop_notes = shared
    monkeypatch.setenv("DESKTOP_MEMORY_DB", url.replace("postgres@", "postgres:s3cret@"))
    w = make_window(_factory, Settings(machine_name="desktop"))
    qtbot.waitUntil(lambda: w.stats is not None and w.stats.documents.get("indexed") == 1, timeout=15000)
    dlg = w.show_settings()
    shown_url = dlg.editor("db_url").edit.placeholderText()
    assert "DESKTOP_MEMORY_DB (open now)" in shown_url and "postgres:***@" in shown_url and "s3cret" not in shown_url
    assert dlg.editor("db_url").value() == "" and "open now" not in dlg.editor("db_path").edit.placeholderText()
    dlg.reject()
    w.close()
    assert "s3cret" not in (settings_path().read_text(encoding="utf-8") if settings_path().exists() else "")
