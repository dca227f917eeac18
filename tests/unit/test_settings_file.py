"""Settings persistence: a saved file loads back equal; a broken one raises, a partial one takes defaults."""

from __future__ import annotations

import pytest

from desktop_memory.config import EmbedderSettings, SearchSettings, Settings, settings_path
from desktop_memory.errors import SettingsError
from desktop_memory.settings_file import load_settings, save_settings


def test_settings_round_trip(tmp_path):
    s = Settings(search=SearchSettings(top_k=7),
                 embedder=EmbedderSettings(kind="ollama", ollama_url="http://127.0.0.1:9999"))
    s.gui["geometry"] = "abc"  # the window's own state is a plain dict
    save_settings(s)
    assert settings_path().exists()
    loaded = load_settings()
    assert loaded.search.top_k == 7 and loaded.embedder.kind == "ollama"
    assert loaded.embedder.ollama_url == "http://127.0.0.1:9999" and loaded.gui["geometry"] == "abc"
    assert loaded == s


def test_broken_settings_raise_and_partial_settings_take_defaults(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text("this is [not toml", encoding="utf-8")
    with pytest.raises(SettingsError):
        load_settings(p)
    p.write_text("[search]\ntop_k = 3\nunknown_key = 1\n[future_section]\nx = 1\n", encoding="utf-8")
    loaded = load_settings(p)
    assert loaded.search.top_k == 3 and loaded.search.backend == "hybrid"
