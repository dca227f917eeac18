"""The CLI a person pipes and scripts (issue 22): quiet closed pipes, paths that do not exist, libraries that do not
exist or are empty, progress off a terminal, help on every option, stats that add up, and the README's examples run
as written. The real CLI in a subprocess, on real files, with the hash embedder (fast and deterministic)."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_memory.cli import build_parser
from desktop_memory.cli.output import ProgressBar
from desktop_memory.models import IndexProgress
from tests.conftest import MDDOCS
from tests.support.cli import REPO, cli_cmd, cli_env, run_cli, write_settings

TUTORIAL = MDDOCS / "fastapi" / "tutorial"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_settings(tmp_path / "config", embedder={"kind": "hash"})


def copy_docs(folder: Path, n: int = 4, sub: str = "", start: int = 0) -> list[Path]:
    (folder / sub).mkdir(parents=True, exist_ok=True)
    out = []
    for src in sorted(TUTORIAL.glob("*.md"))[start:start + n]:
        out.append(folder / sub / src.name)
        shutil.copyfile(src, out[-1])
    return out


@pytest.fixture
def library(tmp_path: Path, config: Path) -> tuple[Path, Path]:
    lib = tmp_path / "docs"
    copy_docs(lib, 4)
    copy_docs(lib, 3, "tutorial", start=4)
    db = tmp_path / "lib.db"
    proc = run_cli(db, "index", lib, "--quiet", config=config)
    assert proc.returncode == 0, proc.stderr
    return lib, db


def test_a_reader_that_closes_the_pipe_ends_the_command_quietly(library, config):
    """`search … | head -1`, `list | head -3`: the reader stops early; exit 0 and no traceback, as grep and git."""
    _, db = library
    for args in (["search", "the", "--top-k", "1000"], ["list"], ["search", "the", "--json"], ["stats"]):
        proc = subprocess.Popen(cli_cmd(db, *args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
                                env=cli_env(config))
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # the reader is gone before the first line is written
        err = proc.stderr.read().decode()
        assert proc.wait(120) == 0, (args, err)
        assert "Traceback" not in err and "BrokenPipe" not in err, err
    shell = subprocess.run(["bash", "-c", 'set -o pipefail; "$@" | head -1', "-", *cli_cmd(db, "list")],
                           capture_output=True, text=True, cwd=REPO, env=cli_env(config), timeout=120, check=False)
    assert shell.returncode == 0 and shell.stdout.count("\n") == 1 and not shell.stderr, shell


def roots(db: Path, config: Path) -> list[str]:
    """The sources as the context's [Source: …] lines name them (relative to their library folder)."""
    proc = run_cli(db, "context", "path parameters", "--json", "--include-weak", "--budget", "100000",
                   config=config)
    assert proc.returncode == 0, proc.stderr
    return [item["header"].removeprefix("[Source: ").split()[0] for item in json.loads(proc.stdout)["items"]]


def test_a_folder_inside_a_library_folder_is_indexed_as_part_of_it(library, config, tmp_path):
    lib, db = library
    before = roots(db, config)
    assert any(s.startswith("docs/tutorial/") for s in before), before
    (lib / "tutorial" / "new-page.md").write_text("# Path parameters again\n\nA new page about path parameters.\n")
    proc = run_cli(db, "index", lib / "tutorial", "--json", config=config)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["indexed"] == 1
    after = roots(db, config)
    assert not any(s.startswith("tutorial/") for s in after), f"a second, nested library folder: {after}"
    assert any(s == "docs/tutorial/new-page.md" for s in after), after

    from desktop_memory.config import Settings
    from desktop_memory.embed.hashing import HashEmbedder
    from desktop_memory.service import MemoryService

    svc = MemoryService(Settings(), db_path=db, embedder=HashEmbedder(64))  # the service (MCP's index_path too)
    try:
        assert svc.roots() == [str(lib)]
        svc.index_paths([lib / "tutorial"])
        assert svc.roots() == [str(lib)]
        # the other way round: a folder that holds a library folder takes its place
        outer = tmp_path / "outer"
        copy_docs(outer, 2, "inner", start=8)
        svc.index_paths([outer / "inner"])
        assert svc.roots() == [str(lib), str(outer / "inner")]
        svc.index_paths([outer])
        assert svc.roots() == [str(lib), str(outer)]
    finally:
        svc.close()


def test_a_path_that_does_not_exist_is_an_error_and_nothing_is_recorded(library, config, tmp_path):
    lib, db = library
    listed = run_cli(db, "list", "--json", config=config).stdout
    missing = tmp_path / "no" / "such" / "path"
    proc = run_cli(db, "index", missing, lib, config=config)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stderr.strip() == f"error: no such file or folder: {missing}"
    assert run_cli(db, "list", "--json", config=config).stdout == listed, "nothing was recorded"
    fresh = tmp_path / "fresh.db"
    proc = run_cli(fresh, "index", missing, config=config)
    assert proc.returncode == 2 and "no such file or folder" in proc.stderr
    assert not fresh.exists(), "no database made for a typo"


@pytest.mark.parametrize("args", [["search", "hello"], ["context", "hello"], ["stats"], ["list"], ["check"],
                                  ["remove", "x"], ["embed"], ["compact"]])
def test_reading_a_library_that_does_not_exist_says_so_and_creates_nothing(tmp_path, config, args):
    db = tmp_path / "some" / "new" / "dir" / "x.db"
    proc = run_cli(db, *args, config=config)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert proc.stderr.startswith(f"error: no library at {db}: index a folder first"), proc.stderr
    assert not (tmp_path / "some").exists(), "nothing created"


def test_an_empty_library_says_so_and_how_to_add_files(tmp_path, config):
    db = tmp_path / "empty.db"
    (tmp_path / "nothing-here").mkdir()
    assert run_cli(db, "index", tmp_path / "nothing-here", "--quiet", config=config).returncode == 0
    for args in (["search", "hello"], ["context", "hello"], ["list"], ["stats"]):
        proc = run_cli(db, *args, config=config)
        assert proc.returncode == 0, proc.stderr
        assert "the library is empty: add files with `desktop-memory index FOLDER`" in proc.stderr, (args, proc)


def test_index_off_a_terminal_prints_progress_lines(tmp_path, config, monkeypatch, capsys):
    """A log or a pipe gets a plain line every few seconds (here: every time, to see them in a short run)."""
    from desktop_memory.cli import main, output

    folder = tmp_path / "docs"
    copy_docs(folder, 6)
    monkeypatch.setenv("DESKTOP_MEMORY_CONFIG_DIR", str(config))
    monkeypatch.setattr(output, "LINE_EVERY_S", 0.0)
    assert main(["--db", str(tmp_path / "x.db"), "index", str(folder)]) == 0  # stderr is captured: not a terminal
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert any(re.fullmatch(r"\d\d:\d\d:\d\d reading \d+/6 files · \d+ chunks", ln) for ln in lines), lines
    assert any(" embedding " in ln for ln in lines), lines
    assert "\r" not in err
    monkeypatch.setattr(output, "LINE_EVERY_S", 5.0)  # a short run in a script: only its result
    proc = run_cli(tmp_path / "y.db", "index", folder, config=config)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert main(["--db", str(tmp_path / "z.db"), "index", "--quiet", str(folder)]) == 0
    assert capsys.readouterr().err == ""


def test_progress_lines_come_every_few_seconds_and_at_each_phase_after_that(capsys):
    now = [0.0]
    bar = ProgressBar(True, clock=lambda: now[0], every_s=5.0)
    for t, done in ((0, 0), (1, 1), (4, 2), (5.5, 3), (6, 4), (11, 5)):
        now[0] = t
        bar(IndexProgress(phase="extract", files_total=9, files_done=done))
    now[0] = 11.5
    bar(IndexProgress(phase="embed", chunks_to_embed=10))
    lines = capsys.readouterr().err.splitlines()
    assert [ln.split(" ", 1)[1] for ln in lines] == [
        "reading 3/9 files · 0 chunks", "reading 5/9 files · 0 chunks", "embedding 0/10 chunks (0/s)"]
    quick = ProgressBar(True, clock=lambda: now[0], every_s=5.0)
    quick(IndexProgress(phase="extract", files_total=1))
    quick(IndexProgress(phase="embed", chunks_to_embed=1))
    assert capsys.readouterr().err == "", "a run shorter than the interval prints only its result"


def _options(parser: argparse.ArgumentParser, where: str = "desktop-memory"):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, f"{where} {name}")
        elif not isinstance(action, argparse._HelpAction):
            yield where, action


def test_every_option_and_argument_has_help_text():
    missing = [f"{where} {a.option_strings or a.dest}" for where, a in _options(build_parser())
               if not a.help or a.help == argparse.SUPPRESS]
    assert missing == []
    names = {where for where, _ in _options(build_parser())}
    assert "desktop-memory bench" in names, "the harness's command is found through its entry point"


def test_stats_explain_chunks_without_a_vector(tmp_path, config):
    folder = tmp_path / "docs"
    shared = "## Licence\n\n" + "This text is the same in every file of the folder, word for word. " * 8 + "\n"
    for i in range(3):
        body = f"# Page {i}\n\n" + f"Page {i} has its own words about topic {i}. " * 20 + "\n\n"
        (folder / f"p{i}.md").parent.mkdir(exist_ok=True)
        (folder / f"p{i}.md").write_text(body + shared)
    db = tmp_path / "x.db"
    assert run_cli(db, "index", folder, "--quiet", "--no-embed", config=config).returncode == 0
    st = json.loads(run_cli(db, "stats", "--json", config=config).stdout)
    assert st["duplicates"] >= 2 and st["vectors"] == 0 and st["pending_vectors"] > 0
    assert st["chunks"] == st["vectors"] + st["duplicates"] + st["pending_vectors"]
    proc = run_cli(db, "stats", config=config)
    chunks_line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("chunks"))
    assert (f"0 with a vector, {st['duplicates']} duplicate(s) sharing another passage's vector, "
            f"{st['pending_vectors']} waiting for a vector") in chunks_line
    assert "`desktop-memory embed` embeds them" in proc.stderr
    assert run_cli(db, "embed", "-q", config=config).returncode == 0
    proc = run_cli(db, "stats", config=config)
    assert "0 waiting for a vector" in proc.stdout and "embed" not in proc.stderr


def _block_after(heading: str) -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index(heading):]
    block = section[section.index("```bash\n") + 8:]
    return block[:block.index("```")].splitlines()


@pytest.mark.slow
def test_the_readme_command_examples_work_as_written_after_the_quick_start(tmp_path):
    """The Quick start activates the venv (so `desktop-memory` is on PATH); then every example of the CLI section
    runs as written in the checkout (the long-running `watch` aside), with the default settings (the real model)."""
    config = tmp_path / "config"  # no settings file: the defaults
    assert any(". .venv/bin/activate" in line for line in _block_after("## Quick start"))
    lines = [ln.split("  #")[0].strip() for ln in _block_after("## Command line")]
    lines = [ln for ln in lines if ln and not ln.startswith("desktop-memory watch")]
    assert len(lines) >= 5 and all(ln.startswith("desktop-memory ") for ln in lines)
    work = tmp_path / "checkout"
    shutil.copytree(REPO / "docs", work / "docs")
    shutil.copyfile(REPO / "README.md", work / "README.md")
    bindir = tmp_path / "bin"  # what activating the venv gives: `desktop-memory` on PATH
    bindir.mkdir()
    (bindir / "desktop-memory").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m desktop_memory.cli "$@"\n')
    (bindir / "desktop-memory").chmod(0o755)
    env = cli_env(config, DESKTOP_MEMORY_DATA_DIR=str(tmp_path / "data"),
                  PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}")
    for line in lines:
        proc = subprocess.run(["bash", "-c", "set -eo pipefail\n" + line], capture_output=True, text=True,
                              cwd=work, env=env, timeout=300, check=False)
        assert proc.returncode == 0, (line, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr and "error" not in proc.stderr, (line, proc.stderr)
        if line.startswith("desktop-memory index"):
            assert re.search(r"indexed [1-9]\d*,", proc.stdout), proc.stdout
        if line.startswith("desktop-memory search"):
            assert proc.stdout.strip() and "no results" not in proc.stdout, (line, proc.stdout)
    assert (work / "context.txt").read_text().startswith("[Source: ")
