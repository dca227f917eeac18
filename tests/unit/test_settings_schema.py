"""The settings schema as a front end reads it: every field described, ranges read from the annotations, the
typed appearance section (and the migration of old files' ``gui.theme``), every problem found at once."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Literal

import msgspec
import pytest

from desktop_memory.config import AppearanceSettings, Settings, ui
from desktop_memory.settings_file import load_settings, save_settings, settings_problems, validate_settings
from desktop_memory.settings_schema import all_fields, field_spec, pages


def test_every_shown_field_has_a_title_and_help_and_every_section_a_page():
    shown = [f for f in all_fields() if not f.hidden]
    assert len(shown) > 30
    for f in shown:
        assert f.title and not f.title.islower(), f.name
        assert len(f.help) > 20, f.name
    sections = {f.name for f in dataclasses.fields(Settings) if dataclasses.is_dataclass(getattr(Settings(), f.name))}
    assert sections <= {p.key for p in pages()}  # every section has a page
    assert [p.title for p in pages()][:3] == ["Library", "Embedder", "Search"]


def test_ranges_come_from_the_annotations():
    by = {f.name: f for f in all_fields()}
    assert (by["search.top_k"].minimum, by["search.top_k"].maximum) == (1, 1000)
    assert (by["search.rrf_k"].minimum, by["search.rrf_k"].maximum) == (1, 100_000)
    assert (by["embedder.batch_size"].maximum, by["embedder.threads"].maximum) == (4096, 1024)
    assert by["ingest.max_file_mb"].minimum == 0 and by["ingest.max_file_mb"].min_exclusive
    assert by["appearance.theme"].choices == ("system", "light", "dark")
    assert by["ingest.extra_ignore"].kind == "lines" and by["watch.paused"].hidden


def test_a_new_field_gets_its_spec_with_no_other_code():
    hint = Annotated[int, msgspec.Meta(ge=2, lt=9), ui("Rerank depth", "How many results are reranked.", unit=" x")]
    spec = field_spec(("reranker", "depth"), hint, 4)
    assert (spec.kind, spec.minimum, spec.maximum, spec.max_exclusive) == ("int", 2, 9, True)
    assert spec.title == "Rerank depth" and spec.hints["unit"] == " x"
    choice = field_spec(("reranker", "kind"), Literal["a", "b"], "a")
    assert choice.kind == "choice" and choice.choices == ("a", "b") and choice.title == "Kind"
    with pytest.raises(TypeError, match="hidden"):
        field_spec(("x", "y"), dict[str, int], {})


def test_old_gui_theme_moves_to_the_typed_section_and_nothing_is_lost(tmp_path):
    p = tmp_path / "settings.toml"
    p.write_text('[gui]\ntheme = "dark"\ngeometry = "abc"\nlast_query = "q"\n', encoding="utf-8")
    s = load_settings(p)
    assert s.appearance == AppearanceSettings(theme="dark")
    assert s.gui == {"geometry": "abc", "last_query": "q"}
    save_settings(s, p)
    text = p.read_text(encoding="utf-8")
    assert "[appearance]" in text and 'theme = "dark"' in text
    assert load_settings(p) == s
    # a value that is not a theme stays where it was (the window ignores it); a typed section wins
    assert validate_settings({"gui": {"theme": "blue"}}).gui == {"theme": "blue"}
    both = validate_settings({"gui": {"theme": "dark"}, "appearance": {"theme": "light"}})
    assert both.appearance.theme == "light" and "theme" not in both.gui
    with pytest.raises(Exception, match="appearance"):
        validate_settings({"appearance": {"theme": "blue"}})


def test_settings_problems_lists_every_problem_with_its_field():
    data = Settings().to_dict()
    data["search"]["top_k"] = 0
    data["chunking"].update(target_chars=3000, max_chars=1100, overlap_chars=5000)
    found = settings_problems(data, Settings())
    assert [e.keys for e in found] == [("search", "top_k"), ("chunking", "target_chars"),
                                      ("chunking", "overlap_chars")]
    assert "3000" in found[2].detail and ">= 1" in found[0].detail
    assert settings_problems(Settings().to_dict(), Settings()) == []
