"""Issue 33, "a newcomer's first ten minutes" §3 and §6: `desktop-memory paths` names where everything lives (from the
code that puts it there, creating nothing), `-` reads the query from stdin, and every command that prints a result
has `--json`. The real CLI in a subprocess with the hash embedder."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path

import pytest

from desktop_memory.cli import build_parser
from tests.support.cli import REPO, cli_cmd, cli_env, run_cli, write_settings

# commands that print no result of their own: a stream of updates until Ctrl+C, the MCP protocol, the benchmark's
# report (the harness has its own --out FILE for JSON)
NO_RESULT = {"watch", "mcp", "bench"}


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_settings(tmp_path / "config", embedder={"kind": "hash"})


@pytest.fixture
def library(tmp_path: Path, config: Path) -> Path:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "plan.md").write_text("# Plan\n\nThe harbour bridge opens in spring; the ferry keeps running.\n")
    (notes / "garden.md").write_text("# Garden\n\nTomatoes need sun and water every morning.\n")
    db = tmp_path / "data" / "memory.db"
    assert run_cli(db, "index", notes, "--quiet", config=config).returncode == 0
    return db


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_command_that_prints_a_result_has_json():
    missing = [name for name, p in _subcommands().items()
               if name not in NO_RESULT and not any("--json" in a.option_strings for a in p._actions)]
    assert missing == []


def test_json_output_of_each_command_is_one_json_document(library, config, tmp_path):
    runs = {
        "stats": ["stats"], "list": ["list"], "check": ["check"], "search": ["search", "harbour"],
        "context": ["context", "harbour", "--include-weak"], "embed": ["embed"], "reembed": ["reembed"],
        "compact": ["compact"], "settings": ["settings"], "paths": ["paths"], "embedder": ["embedder"],
        "rerank": ["rerank"], "api-key": ["api-key", "status", "rerank"],
        "index": ["index", str(tmp_path / "notes")], "remove": ["remove", str(tmp_path / "notes" / "garden.md")],
        "include": ["include", str(tmp_path / "notes" / "garden.md")],
        "copy": ["copy", "--from", str(library), "--to", str(tmp_path / "copied.db")],
    }
    assert set(runs) == set(_subcommands()) - NO_RESULT, "a new command: add it here"
    out = {}
    for name, args in runs.items():
        proc = run_cli(library, *args, "--json", config=config,
                       DESKTOP_MEMORY_DATA_DIR=str(tmp_path / "data"), DESKTOP_MEMORY_NO_KEYRING="1")
        assert proc.returncode == 0, (name, proc.stderr)
        out[name] = json.loads(proc.stdout)  # nothing but the JSON on stdout
    assert out["check"] == {"ok": True, "problems": [], "full": False, "fts_self_check_skipped": False}
    assert out["remove"]["removed_documents"] == 1
    assert out["remove"]["excluded"] == [str(tmp_path / "notes" / "garden.md")]  # final: excluded, as the plain one
    assert out["include"]["included_again"] == [str(tmp_path / "notes" / "garden.md")]
    assert out["compact"]["database"] == str(library) and out["compact"]["bytes_after"] > 0
    assert out["reembed"]["chunks_embedded"] >= 2 and out["embed"]["cancelled"] is False
    assert out["settings"]["ok"] and out["settings"]["settings"]["embedder"]["kind"] == "hash"
    assert out["embedder"]["embedder"]["kind"] == "hash"
    assert out["rerank"]["rerank"]["on"] is False and out["api-key"] == {
        "name": "rerank", "status": "not set", "messages": ["rerank API key: not set"]}


def test_paths_names_every_place_from_the_real_config_and_creates_nothing(tmp_path, config, library):
    from desktop_memory.api_keys import KEY_FILE

    data = tmp_path / "fresh-data"  # a data folder that does not exist yet
    env = {"DESKTOP_MEMORY_DATA_DIR": str(data), "DESKTOP_MEMORY_NO_KEYRING": "1"}
    proc = subprocess.run([*cli_cmd(library, "paths", "--json")[:3], "paths", "--json"], capture_output=True,
                          text=True, cwd=REPO, env=cli_env(config, **env), timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["settings"] == {"what": "settings file", "path": str(config / "settings.toml"), "exists": True,
                               "set_aside": []}
    assert got["api_keys"]["path"] == str(config / KEY_FILE) and not got["api_keys"]["exists"]
    assert got["keyring"]["service"] == "desktop-memory" and got["keyring"]["entries"] == ["embedder", "rerank",
                                                                                               "database"]
    assert got["data_folder"]["path"] == str(data) and got["database"]["path"] == str(data / "memory.db")
    assert got["logs"]["path"] == str(data / "logs") and got["cache"]["path"] == str(data / "model-check.json")
    assert got["rerank_cache"]["path"] == str(data / "rerank-servers.json")
    assert got["socket"]["path"].endswith(".sock") and not got["socket"]["exists"]
    assert not data.exists(), "paths names the places; it makes none of them"
    assert any("DESKTOP_MEMORY_DATA_DIR is set" in n for n in got["notes"])

    # --db names another library: the database and its socket follow it (the app's own endpoint for that file)
    from desktop_memory.instance_endpoint import endpoint

    proc = run_cli(library, "paths", "--json", config=config, **env)
    got = json.loads(proc.stdout)
    assert got["database"]["path"] == str(library) and got["database"]["exists"]
    os.environ["DESKTOP_MEMORY_CONFIG_DIR"] = str(config)  # the endpoint's name includes the config folder
    try:
        assert got["socket"]["path"] == endpoint(library, create=False)
    finally:
        del os.environ["DESKTOP_MEMORY_CONFIG_DIR"]

    plain = run_cli(library, "paths", config=config, **env)
    assert plain.returncode == 0 and str(config / "settings.toml") in plain.stdout and "socket" in plain.stdout


def test_paths_works_with_a_broken_settings_file(tmp_path):
    """The moment a person looks for the settings file is when it is broken."""
    config = tmp_path / "config"
    config.mkdir()
    (config / "settings.toml").write_text("[search\nbroken = ")
    proc = run_cli(tmp_path / "x.db", "paths", config=config)
    assert proc.returncode == 0, proc.stderr
    assert str(config / "settings.toml") in proc.stdout and "settings file has a problem" in proc.stderr


def test_a_dash_reads_the_query_from_stdin(library, config):
    for command in ("search", "context"):
        proc = subprocess.run(cli_cmd(library, command, "-", "--backend", "keyword", "--include-weak")
                              if command == "context" else cli_cmd(library, command, "-", "--backend", "keyword"),
                              input="  harbour\nbridge  \n", capture_output=True, text=True, cwd=REPO,
                              env=cli_env(config), timeout=120, check=False)
        assert proc.returncode == 0, (command, proc.stderr)
        assert "plan.md" in proc.stdout and "garden.md" not in proc.stdout, (command, proc.stdout)
    proc = subprocess.run(cli_cmd(library, "search", "-", "--json"), input="harbour bridge", capture_output=True,
                          text=True, cwd=REPO, env=cli_env(config), timeout=120, check=False)
    assert json.loads(proc.stdout)[0]["source"].endswith("plan.md")
    empty = subprocess.run(cli_cmd(library, "search", "-"), input="  \n", capture_output=True, text=True, cwd=REPO,
                           env=cli_env(config), timeout=120, check=False)
    assert empty.returncode == 2 and "no query on stdin" in empty.stderr
    # undecodable bytes are not a crash
    odd = subprocess.run(cli_cmd(library, "search", "-"), input=b"harbour \xff\xfe", capture_output=True, cwd=REPO,
                         env=cli_env(config), timeout=120, check=False)
    assert odd.returncode == 0 and b"Traceback" not in odd.stderr
