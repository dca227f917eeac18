"""Real settings files on disk: every wrong value is refused with the key, the file and the line; a broken file
is never overwritten; the CLI refuses to run and says how to reset; reset keeps a dated backup."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import typing
from pathlib import Path
from typing import Annotated

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_memory.config import ChunkSettings, IngestSettings, Settings, settings_path
from desktop_memory.errors import SettingsError
from desktop_memory.settings_file import load_settings, reset_settings, save_settings

BAD = [  # (file body, key named in the message, line, words in the message)
    ('[search]\ntop_k = "ten"\n', "[search] top_k", 2, "expected a whole number, got 'ten'"),
    ('[search]\nbackend = "hybrid"\nkeyword_weight = "x"\n', "[search] keyword_weight", 3, "expected a number"),
    ("# mine\ndb_path = 5\n", "db_path", 2, "expected text"),
    ('[ingest]\nmax_file_mb = "lots"\n', "[ingest] max_file_mb", 2, "got 'lots'"),
    ('[context]\nbudget_tokens = "x"\n', "[context] budget_tokens", 2, "got 'x'"),
    ("[chunking]\ntarget_chars = 0\nmax_chars = 0\n", "[chunking] target_chars", 2, ">= 100"),
    ("[chunking]\ntarget_chars = -5\n", "[chunking] target_chars", 2, ">= 100"),
    ("[chunking]\ntarget_chars = 1200\nmax_chars = 1000\n", "[chunking] target_chars", 2, "must not be larger"),
    ('[ingest]\nextra_ignore = "*.md"\n', "[ingest] extra_ignore", 2, "a list"),
    ('[ingest]\nextra_ignore = ["*.log", "!"]\n', "[ingest] extra_ignore", 2, "'!' is not a valid pattern"),
    ('[ingest]\npdf_engine = "fast"\n', "[ingest] pdf_engine", 2, "'auto', 'pdfium', 'pdfplumber'"),
    ('[search]\nbackend = "semantic"\n', "[search] backend", 2, "'hybrid'"),
    ('[context]\npath_style = "full"\n', "[context] path_style", 2, "'relative'"),
    ("[search]\ntop_k = 99999999\n", "[search] top_k", 2, "<= 1000"),
    ("[embedder]\nfollow = 1\nbatch_size = 0\n", "[embedder] batch_size", 3, ">= 1"),
    ("[ingest]\nfollow_symlinks = 1\n", "[ingest] follow_symlinks", 2, "true or false"),
    ("search = 3\n", "search", 1, "a [section]"),
]


@pytest.mark.parametrize(("body", "key", "line", "words"), BAD)
def test_wrong_values_name_key_file_and_line(tmp_path: Path, body: str, key: str, line: int, words: str) -> None:
    p = tmp_path / "settings.toml"
    p.write_text(body, encoding="utf-8")
    with pytest.raises(SettingsError) as info:
        load_settings(p)
    err = info.value
    assert err.problem.startswith(key + ":"), err.problem
    assert words in err.problem
    assert err.line == line
    assert str(p) in str(err) and f"line {line}" in str(err) and "settings --reset" in str(err)


def test_toml_syntax_error_is_not_silently_defaults(tmp_path: Path) -> None:
    p = tmp_path / "settings.toml"
    p.write_text('db_path = "/data/mine.db"\n[search\ntop_k = 3\n', encoding="utf-8")
    with pytest.raises(SettingsError) as info:
        load_settings(p)
    assert "not valid TOML" in info.value.problem and info.value.line == 2


def test_not_utf8_file(tmp_path: Path) -> None:
    p = tmp_path / "settings.toml"
    p.write_bytes(b'db_path = "a"\nquery_prefix = "\xff"\n')
    with pytest.raises(SettingsError) as info:
        load_settings(p)
    assert "UTF-8" in info.value.problem and info.value.line == 2


def test_broken_file_is_never_overwritten(tmp_path: Path) -> None:
    p = tmp_path / "settings.toml"
    body = 'db_path = "/data/mine.db"\n[search\n'
    p.write_text(body, encoding="utf-8")
    with pytest.raises(SettingsError):
        save_settings(Settings(), p)
    assert p.read_text(encoding="utf-8") == body


def test_reset_keeps_a_dated_backup(tmp_path: Path) -> None:
    p = tmp_path / "settings.toml"
    p.write_text("[search]\ntop_k = 'ten'\n", encoding="utf-8")
    backup = reset_settings(p)
    assert backup is not None and backup.name.startswith("settings.toml.broken-")
    assert backup.read_text(encoding="utf-8") == "[search]\ntop_k = 'ten'\n"
    assert not p.exists() and load_settings(p) == Settings()
    p.write_text("[search]\ntop_k = 'ten'\n", encoding="utf-8")
    second = reset_settings(p)
    assert second is not None and second != backup and backup.exists()


def test_settings_are_frozen_and_replace_works() -> None:
    s = Settings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.search.top_k = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.db_path = "x"  # type: ignore[misc]
    t = dataclasses.replace(s, chunking=dataclasses.replace(s.chunking, target_chars=600))
    assert t.chunking.target_chars == 600 and s.chunking.target_chars == 800


def test_no_dead_settings() -> None:
    """dedupe_min_files was never read; pdf_engine was read but not declared: now it is a validated setting."""
    assert "dedupe_min_files" not in {f.name for f in dataclasses.fields(ChunkSettings)}
    assert IngestSettings().pdf_engine == "auto"
    assert isinstance(IngestSettings().extra_ignore, tuple)


@dataclasses.dataclass(frozen=True)
class WatchSettings:  # what another part of the app may add later
    debounce_ms: Annotated[int, msgspec.Meta(ge=0)] = 500


@dataclasses.dataclass(frozen=True)
class Extended(Settings):
    watch: WatchSettings = dataclasses.field(default_factory=WatchSettings)


def test_a_field_added_later_is_validated_from_its_annotation() -> None:
    """Validation is driven by the dataclass types: a new section/field needs no validation code."""
    with pytest.raises(msgspec.ValidationError, match=r"\$\.watch\.debounce_ms"):
        msgspec.convert({"watch": {"debounce_ms": -1}}, Extended)
    assert msgspec.convert({"watch": {"debounce_ms": 5}}, Extended).watch.debounce_ms == 5


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, "-m", "desktop_memory.cli", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120, check=False)


def test_cli_refuses_to_run_with_a_broken_file_then_resets(tmp_path: Path) -> None:
    p = settings_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    body = '[search]\ntop_k = "ten"\n'
    p.write_text(body, encoding="utf-8")
    out = _cli("--db", str(tmp_path / "x.db"), "stats", cwd=tmp_path)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "[search] top_k" in out.stderr and "line 2" in out.stderr and "settings --reset" in out.stderr
    assert not (tmp_path / "x.db").exists()  # refused before opening anything
    assert p.read_text(encoding="utf-8") == body
    out = _cli("settings", cwd=tmp_path)
    assert out.returncode == 1 and "top_k" in out.stderr
    out = _cli("settings", "--reset", cwd=tmp_path)
    assert out.returncode == 0 and "broken-" in out.stdout
    assert not p.exists() and list(p.parent.glob("settings.toml.broken-*"))
    out = _cli("--db", str(tmp_path / "x.db"), "stats", cwd=tmp_path)
    assert out.returncode == 1 and "no library at" in out.stderr, out.stderr  # past the settings: no library yet


TOML_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(10**20), 10**20), st.floats(), st.text(max_size=12)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=8,
)
SECTIONS = {name: [g.name for g in dataclasses.fields(hint)] if dataclasses.is_dataclass(hint) else []
            for name, hint in typing.get_type_hints(Settings).items()}


@st.composite
def settings_dicts(draw: st.DrawFn) -> dict[str, object]:
    """Dicts shaped like settings.toml: real section and key names (and some others) with any values."""
    out: dict[str, object] = {}
    for section in draw(st.lists(st.sampled_from(sorted(SECTIONS) + ["bogus"]), max_size=4, unique=True)):
        keys = SECTIONS.get(section) or ["x"]
        if not SECTIONS.get(section) and draw(st.booleans()):
            out[section] = draw(TOML_VALUES)
            continue
        out[section] = {k: draw(TOML_VALUES) for k in draw(st.lists(st.sampled_from(keys), max_size=4, unique=True))}
    return out


@settings(max_examples=400, deadline=None)
@given(data=settings_dicts())
def test_any_settings_data_validates_or_names_the_problem(data: dict[str, object]) -> None:
    from desktop_memory.settings_file import validate_settings

    try:
        result = validate_settings(data, path=Path("settings.toml"), source="")
    except SettingsError as exc:
        assert exc.problem and "settings.toml" in str(exc)
        return
    assert isinstance(result, Settings)
