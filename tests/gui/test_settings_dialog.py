"""The Settings dialog is generated from the settings schema: every field's range, choices and help are the schema's,
a valid value survives opening and OK unchanged, problems are shown at their field (the settings file's own check),
and Restore Defaults restores everything."""

from __future__ import annotations

import dataclasses

from PySide6.QtWidgets import QDialogButtonBox

from desktop_memory.config import (
    ChunkSettings,
    DesktopSettings,
    EmbedderSettings,
    IngestSettings,
    SearchSettings,
    Settings,
)
from desktop_memory.gui.settings import SettingsDialog
from desktop_memory.gui.settings.editors import FLOAT_LIMIT, ChoiceEditor, RadioEditor
from desktop_memory.gui.tasks import TaskRunner
from desktop_memory.settings_file import load_settings
from desktop_memory.settings_schema import INT_LIMIT, all_fields, pages
from tests.gui.fake_service import FakeService


def _dialog(qtbot, settings: Settings | None = None) -> SettingsDialog:
    runner = TaskRunner(max_threads=1, inline=True)  # the dialog tests need answers, not threads
    dlg = SettingsDialog(settings or Settings(), runner)
    qtbot.addWidget(dlg)
    return dlg


def test_every_field_has_the_schemas_range_choices_and_help(qtbot):
    dlg = _dialog(qtbot)
    shown = [f for f in all_fields() if not f.hidden]
    assert sorted(dlg.editors) == sorted(f.name for f in shown)  # every field has an editor, nothing else does
    assert [dlg.page_list.item(i).text() for i in range(dlg.page_list.count())] == [p.title for p in pages()]
    for spec in shown:
        ed = dlg.editor(spec.name)
        assert ed.input.toolTip() == spec.help, spec.name
        if spec.kind in ("int", "float"):
            box = ed.input
            limit = INT_LIMIT if spec.kind == "int" else FLOAT_LIMIT
            lo = spec.minimum if spec.minimum is not None else -limit
            hi = spec.maximum if spec.maximum is not None else limit
            assert (box.minimum(), box.maximum()) == (lo, hi), spec.name
            assert hi <= limit, f"{spec.name}: a spin box cannot hold the schema's maximum"
        elif spec.kind == "choice":
            if isinstance(ed, RadioEditor):
                offered = tuple(ed.buttons)
            else:
                assert isinstance(ed, ChoiceEditor)
                offered = tuple(ed.combo.itemData(i) for i in range(ed.combo.count()))
            hidden = tuple(spec.hints.get("hidden_choices", ()))
            assert offered == tuple(c for c in spec.choices if c not in hidden or isinstance(ed, RadioEditor))


def test_valid_hand_edited_values_survive_open_and_ok_unchanged(qtbot):
    """Old dialog: top-k 1000 → 200, batch 4096 → 1024, rrf_k 100000 → 1000, threads 1024 → 64, just by OK."""
    s = Settings(
        search=SearchSettings(top_k=1000, rrf_k=100_000, keyword_weight=0.125, keyword_term_budget=3_000_000),
        embedder=EmbedderSettings(batch_size=4096, threads=1024, kind="hash", query_prefix="search_query: "),
        chunking=ChunkSettings(target_chars=30_000, max_chars=40_000, overlap_chars=12_000),
        ingest=IngestSettings(max_file_mb=0.1234567, extra_ignore=("a,b.txt", "*.log")),
        desktop=DesktopSettings(open_with="code --goto {path}:{line}"),
    )
    dlg = _dialog(qtbot, s)
    assert dlg.check()
    assert dlg.result_settings() == s


def test_inconsistent_chunking_is_shown_at_the_field_and_not_rewritten(qtbot):
    dlg = _dialog(qtbot)
    dlg.editor("chunking.target_chars").set_value(3000)
    dlg.editor("chunking.max_chars").set_value(1100)
    dlg.editor("chunking.overlap_chars").set_value(5000)
    dlg.accept()
    assert dlg.result() == 0  # not accepted
    target, overlap = dlg.editor("chunking.target_chars"), dlg.editor("chunking.overlap_chars")
    assert "must not be larger than “Longest passage (hard limit)” (1100)" in target.error.text()
    assert not target.error.isHidden()
    assert "at most half of “Passage size” (3000)" in overlap.error.text()
    assert dlg.editor("chunking.max_chars").error.isHidden()
    page = dlg.stack.currentWidget()
    assert page.spec.key == "chunking" and "⚠" in dlg.page_list.currentItem().text()
    assert target.value() == 3000 and overlap.value() == 5000  # nothing clamped
    dlg.editor("chunking.max_chars").set_value(4000)
    dlg.editor("chunking.overlap_chars").set_value(1500)
    assert dlg.check() and target.error.isHidden() and "⚠" not in dlg.page_list.currentItem().text()
    got = dlg.result_settings().chunking
    assert (got.target_chars, got.max_chars, got.overlap_chars) == (3000, 4000, 1500)


def test_an_exclusive_bound_is_reported_not_clamped(qtbot):
    dlg = _dialog(qtbot)
    dlg.editor("ingest.max_file_mb").set_value(0)
    assert not dlg.check()
    assert "> 0" in dlg.editor("ingest.max_file_mb").problem()


def test_restore_defaults_restores_every_field_but_the_library(qtbot):
    s = Settings(db_path="/data/mine.db", desktop=DesktopSettings(open_with="kate {path}", open_pdf_with="okular"),
                 search=SearchSettings(top_k=99, backend="keyword"),
                 embedder=EmbedderSettings(kind="ollama", threads=3))
    s = dataclasses.replace(s, appearance=dataclasses.replace(s.appearance, theme="dark"))
    dlg = _dialog(qtbot, s)
    dlg.restore_btn.click()
    got = dlg.result_settings()
    assert got == Settings(db_path="/data/mine.db")


def test_when_fields_follow_the_provider(qtbot):
    dlg = _dialog(qtbot)
    kind = dlg.editor("embedder.kind")
    assert isinstance(kind, RadioEditor) and not kind.buttons["hash"].isVisibleTo(dlg)
    assert not dlg.editor("embedder.ollama_url").widget.isEnabled() and not dlg.ollama.isEnabled()
    assert dlg.editor("embedder.threads").widget.isEnabled()
    kind.buttons["ollama"].setChecked(True)
    assert dlg.editor("embedder.ollama_url").widget.isEnabled() and dlg.ollama.isEnabled()
    assert not dlg.editor("embedder.threads").widget.isEnabled()


def test_theme_is_a_typed_setting_applied_and_saved(qtbot, make_window):
    w = make_window(FakeService)
    dlg = w.show_settings()
    dlg.editor("appearance.theme").set_value("dark")
    dlg.editor("desktop.open_with").set_value("kate --line {line} {path}")
    dlg.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    assert w.theme == "dark" and w.theme_actions["dark"].isChecked()
    saved = load_settings()
    assert saved.appearance.theme == "dark" and "theme" not in saved.gui
    assert saved.desktop.open_with == "kate --line {line} {path}"
    w.set_theme("light")  # View ▸ Appearance writes the same typed setting
    assert w.settings.appearance.theme == "light"
