"""QA walk (issue 30 item 3, a value entering by the settings file): a mistyped key (``url`` for ``openai_url``)
loaded without a word, so the setting stayed at its default and `desktop-memory settings` said "ok". It is still
not an error (a newer version's file keeps loading), but `settings` names each ignored key, its line and the keys
it may have meant, on stderr and in ``--json``."""

from __future__ import annotations

import json

from tests.support.cli import run_cli


def test_settings_names_keys_that_no_setting_reads(tmp_path):
    config = tmp_path / "config"
    config.mkdir()
    (config / "settings.toml").write_text(
        'colour = "blue"\n[embedder]\nkind = "hash"\nurl = "http://localhost:8080/v1"\nopenai_modl = "x"\n'
        '[gui]\nanything = 1\n', encoding="utf-8")
    db = tmp_path / "m.db"
    res = run_cli(db, "settings", config=config)
    assert res.returncode == 0 and res.stdout.strip().endswith(": ok"), res
    notes = [line for line in res.stderr.splitlines() if "is not a setting" in line]
    assert notes == [
        "note: colour (line 1) is not a setting and is ignored.",
        "note: [embedder] url (line 4) is not a setting and is ignored: did you mean ollama_url or openai_url?",
        "note: [embedder] openai_modl (line 5) is not a setting and is ignored: did you mean openai_model?",
    ], res.stderr  # [gui] is the window's own free-form state: nothing said of it
    got = json.loads(run_cli(db, "settings", "--json", config=config).stdout)
    assert got["ok"] and [s.split(" (")[0] for s in got["ignored"]] == ["colour", "[embedder] url",
                                                                         "[embedder] openai_modl"]


def test_a_file_of_real_keys_has_nothing_ignored(tmp_path):
    config = tmp_path / "config"
    config.mkdir()
    (config / "settings.toml").write_text('[embedder]\nkind = "hash"\n[search]\ntop_k = 7\n', encoding="utf-8")
    res = run_cli(tmp_path / "m.db", "settings", config=config)
    assert res.returncode == 0 and "is not a setting" not in res.stderr, res.stderr
