"""Architecture rules and settings persistence."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_memory.config import EmbedderSettings, SearchSettings, Settings, settings_path
from desktop_memory.errors import SettingsError
from desktop_memory.settings_file import load_settings, save_settings

PKG = Path(__file__).resolve().parents[2] / "desktop_memory"


def test_core_never_imports_qt():
    """Only desktop_memory/gui may import PySide6 (checked on the source, so lazy imports count too)."""
    offenders = []
    for py in PKG.rglob("*.py"):
        rel = py.relative_to(PKG)
        if rel.parts[0] == "gui" or rel.name == "__main__.py":
            continue
        tree = ast.parse(py.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] if node.level == 0 else [f".{node.module}"]
            if any(n.startswith(("PySide6", "PyQt", ".gui")) or n == "gui" for n in names):
                offenders.append(str(rel))
    assert offenders == []


def test_cli_import_loads_no_qt():
    code = "import sys, desktop_memory.cli, desktop_memory.service; print('PySide6' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


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
