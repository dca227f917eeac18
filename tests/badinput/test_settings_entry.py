"""Issue 30 item 3: every URL, key and value is checked where it enters (CLI, the Settings dialog, settings.toml,
DESKTOP_MEMORY_* environment). A malformed URL is refused in one sentence naming it and nothing is saved; an API key
with a non-ASCII or control character, or of several lines, is refused naming the position and kind of character
and never echoing the key; a key typed as an argument is not echoed by the usage error; a key a server echoes in
another letter case is masked; nesting past a sane depth in settings.toml is refused with the key and line."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest

from desktop_memory.api_keys import get_key, key_file, key_status, redact, set_key
from desktop_memory.cli import main
from desktop_memory.config import EmbedderSettings, SearchSettings, Settings, settings_path
from desktop_memory.errors import ApiKeyError, SettingsError
from desktop_memory.settings_file import load_settings, save_settings, settings_problems, validate_settings

BAD_URLS = ["http://[::1", "localhost:8080", "ftp://example.org/v1", "http://local host:8080/v1",
            "http://127.0.0.1:99999/v1", "http://example.org\u200b/v1"]
SECRET = "sk-leak-0123456789abcdef"


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``main(argv)``: (exit code, stdout, stderr); an argparse exit counts as its code."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("url", BAD_URLS)
def test_a_malformed_url_on_the_command_line_is_refused_and_nothing_is_saved(url: str, capsys) -> None:
    for argv in (["embedder", "--kind", "openai", "--url", url, "--model", "x"],
                 ["embedder", "--kind", "ollama", "--url", url],
                 ["rerank", "--on", "--url", url]):
        code, _, err = _run(argv, capsys)
        assert code == 2, (argv, err)
        assert repr(url) in err and "is not an http:// or https:// address" in err and "Traceback" not in err
        assert len([line for line in err.splitlines() if line.strip()]) == 1  # one sentence
        assert not settings_path().exists()  # nothing saved


@pytest.mark.parametrize("url", BAD_URLS)
def test_a_malformed_url_in_the_settings_file_is_refused_with_key_and_line(url: str) -> None:
    path = settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    text = f'[embedder]\nkind = "ollama"\nollama_url = {json.dumps(url)}\n'
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SettingsError) as caught:
        load_settings()
    err = caught.value
    assert err.keys == ("embedder", "ollama_url") and err.line == 3 and repr(url) in str(err)
    with pytest.raises(SettingsError):  # never overwritten while it does not load
        save_settings(Settings())
    assert path.read_text(encoding="utf-8") == text
    # a server not in use is not checked (a stale address must not stop the app), one in use always is
    assert validate_settings({"embedder": {"kind": "local", "ollama_url": url}}).embedder.kind == "local"
    with pytest.raises(SettingsError, match=r"\[search\] rerank_url"):
        validate_settings({"search": {"rerank": True, "rerank_url": url}})


def test_the_settings_dialog_shows_a_malformed_url_at_its_field(qtbot) -> None:
    from desktop_memory.gui.settings import SettingsDialog
    from desktop_memory.gui.tasks import TaskRunner

    dlg = SettingsDialog(Settings(embedder=EmbedderSettings(kind="openai")), TaskRunner(max_threads=1, inline=True))
    qtbot.addWidget(dlg)
    dlg.editor("embedder.openai_url").set_value("http://[::1")
    assert not dlg.check()
    assert "'http://[::1' is not an http:// or https:// address" in dlg.editor("embedder.openai_url").problem()
    dlg.accept()
    assert dlg.result() == 0  # not accepted, nothing saved
    dlg.editor("embedder.openai_url").set_value("http://[::1]:8080/v1")
    assert dlg.check()
    # the same check the dialog uses, straight from the schema: a field marked as a URL in config.py
    data = Settings(search=SearchSettings(rerank=True)).to_dict()
    data["search"]["rerank_url"] = "http://a b/rerank"
    assert [p.keys for p in settings_problems(data, Settings())] == [("search", "rerank_url")]


def test_an_api_key_with_an_invisible_character_is_refused_without_echoing_it() -> None:
    pasted = "sk-abc\u200bdefghij"
    with pytest.raises(ApiKeyError) as caught:
        set_key("embedder", pasted)
    message = str(caught.value)
    assert "character 7 of 14" in message and "U+200B" in message and "ZERO WIDTH SPACE" in message
    assert "sk-abc" not in message and "defghij" not in message
    assert get_key("embedder") == "" and not key_file().exists()  # nothing stored
    for bad, kind in (("sk-é123", "non-ASCII character U+00E9"), ("sk-\x07bell", "control character U+0007"),
                      ("sk-a b", "a space")):
        with pytest.raises(ApiKeyError, match=re.escape(kind)):
            set_key("embedder", bad)
    set_key("embedder", "sk-good")
    with pytest.raises(ApiKeyError):
        set_key("embedder", "sk-\u200bbad")
    assert get_key("embedder") == "sk-good"  # a refused key does not replace the one stored


def test_a_multi_line_key_is_refused_not_cut_to_its_first_line(capsys, monkeypatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("sk-first-line\nsk-second-line\n"))
    code, _, err = _run(["api-key", "set", "embedder"], capsys)
    assert code == 1 and "2 lines" in err and "sk-first" not in err and "sk-second" not in err
    assert get_key("embedder") == ""
    monkeypatch.setattr(sys, "stdin", io.StringIO("sk-one-line\n"))
    assert _run(["api-key", "set", "embedder"], capsys)[0] == 0
    assert get_key("embedder") == "sk-one-line"


@pytest.mark.parametrize("argv", [["api-key", "set", "embedder", SECRET], ["api-key", "set", SECRET],
                                  ["api-key", SECRET], ["api-key", "set", "embedder", "--", SECRET]])
def test_a_key_typed_as_an_argument_is_not_echoed(argv: list[str], capsys) -> None:
    code, out, err = _run(argv, capsys)
    assert code == 2 and SECRET not in out + err and "stdin" in err
    assert get_key("embedder") == ""


def test_an_unusable_key_from_the_environment_or_an_older_version_is_named_not_sent(monkeypatch) -> None:
    monkeypatch.setenv("DESKTOP_MEMORY_EMBEDDER_API_KEY", "sk-\u200bfrom-env")
    with pytest.raises(ApiKeyError, match="EMBEDDER_API_KEY cannot be used: character 4 of 12") as caught:
        get_key("embedder")
    assert "from-env" not in str(caught.value)
    assert "unusable: character 4" in key_status("embedder") and "from-env" not in key_status("embedder")
    monkeypatch.delenv("DESKTOP_MEMORY_EMBEDDER_API_KEY")
    key_file().parent.mkdir(parents=True, exist_ok=True)
    key_file().write_text(json.dumps({"rerank": "sk-old\u00a0version"}), encoding="utf-8")  # written before checks
    with pytest.raises(ApiKeyError, match=r"api-keys\.json cannot be used: character 7"):
        get_key("rerank")


def test_a_key_echoed_in_another_letter_case_is_masked() -> None:
    text = f"Invalid key {SECRET.upper()} (you sent {SECRET}; as typed: {SECRET.title()})"
    masked = redact(text, SECRET)
    assert SECRET.lower() not in masked.lower() and masked.count("•••") == 3


@pytest.mark.parametrize("value", ["[" * 5000 + "]" * 5000, "{a = " * 3000 + "1" + "}" * 3000])
def test_nesting_past_a_sane_depth_is_refused_with_key_and_line(value: str, capsys) -> None:
    path = settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    text = f'# my settings\n[search]\ntop_k = 5\n\n[gui]\ndeep = {value}\n'
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert caught.value.line == 6 and caught.value.keys == ("gui", "deep") and "nested more than" in str(caught.value)
    code, out, err = _run(["settings"], capsys)
    assert code == 1 and "line 6" in err and "[gui] deep" in err and "Traceback" not in out + err
    code, _, err = _run(["rerank", "--off"], capsys)  # a command that saves: refused, the file kept as it was
    assert code == 1 and "RecursionError" not in err
    with pytest.raises(SettingsError):
        save_settings(Settings())
    assert path.read_text(encoding="utf-8") == text
    # nesting the schema needs, and brackets inside strings and comments, are fine
    path.write_text('[gui]\nx = [[1, 2], {a = [3]}]\ny = "' + "[" * 100 + '"  # ' + "{" * 100 + '\n',
                    encoding="utf-8")
    assert load_settings().gui["x"] == [[1, 2], {"a": [3]}]


def test_cli_settings_with_a_bad_url_stored_by_an_older_version_says_so(capsys) -> None:
    path: Path = settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('[embedder]\nkind = "openai"\nopenai_url = "http://[::1"\nopenai_model = "x"\n', encoding="utf-8")
    for argv in (["settings"], ["search", "anything"], ["embed"]):
        code, out, err = _run(argv, capsys)
        assert code == 1 and "line 3" in err and "openai_url" in err and "Traceback" not in out + err, argv


def test_a_folder_from_the_environment_has_its_tilde_expanded(monkeypatch, tmp_path: Path) -> None:
    from desktop_memory.config import config_dir, data_dir

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("DESKTOP_MEMORY_DATA_DIR", "~/memory-data ")
    monkeypatch.setenv("DESKTOP_MEMORY_CONFIG_DIR", "~/memory-config")
    assert data_dir() == tmp_path / "memory-data" and config_dir() == tmp_path / "memory-config"


def test_choosing_a_server_whose_saved_address_is_malformed_is_refused(capsys) -> None:
    path = settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    text = '[embedder]\nollama_url = "http://[::1"\n'  # let in by an older version while Ollama was not in use
    path.write_text(text, encoding="utf-8")
    code, out, err = _run(["embedder", "--kind", "ollama"], capsys)
    assert code == 2 and "The saved ollama_url 'http://[::1'" in err and "--url" in err and not out
    assert path.read_text(encoding="utf-8") == text
