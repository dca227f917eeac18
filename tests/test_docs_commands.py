"""Issue 33's proof: every shell command in README.md, CONTRIBUTING.md and docs/*.md, found in their code blocks, is
accounted for.

Each command is either RUN here, offline, against a temporary library in a copy of the checkout's docs (the CLI
examples, the privacy demo, the model-check commands, the API-key line), or, when it cannot run here (it needs the
network, a model server, the evaluation data in ../shared, a built bundle, root, another OS, or it is the test
suite itself), CHECKED for what it names: `bash -n` for its syntax, the `desktop-memory` command line against the
real parser, and the files, modules, entry points, extras and system packages it names must exist. A command that
matches no rule fails the test, so a new command in the docs has to be handled here.

The install lines are checked, not run: an install fetches the dependencies from PyPI, and the suite runs offline
(docs/PACKAGING.md, "Publishing to an index", has the install and build runs done by hand).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import tomllib

from desktop_memory.cli import build_parser
from desktop_memory.gui.platform_libs import LIBS
from tests.support.cli import write_settings

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").glob("*.md"))]
SHELL_BLOCKS = {"bash", "sh", "shell", "console", "powershell"}
# in a block without a language (a command followed by its output), the lines that are commands
COMMAND_START = re.compile(r"^(\$ |desktop-memory |python |nice |bash |PYTHONPATH=|QT_QPA_PLATFORM=|dist/)")
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


@dataclass
class Command:
    doc: str
    text: str  # comments removed, continuation lines joined
    shell: str  # bash or powershell


def commands() -> list[Command]:
    out: list[Command] = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.M | re.S):
            lang, body = m.group(1), m.group(2)
            if lang not in SHELL_BLOCKS and lang != "":
                continue
            joined = re.sub(r"\\\n\s*", " ", body)
            for raw in joined.splitlines():
                line = _strip_comment(raw).strip()
                if lang == "":  # output lines: report headers ("… · 2 CPUs", "smoke check (…)"), a folder tree
                    if not COMMAND_START.match(line) or re.search(r" · |smoke check \(|/$", line):
                        continue
                    line = line.removeprefix("$ ")
                if line:
                    out.append(Command(doc.name, line, "powershell" if lang == "powershell" else "bash"))
    return out


def _strip_comment(line: str) -> str:
    """The line without a trailing `# comment` (a # inside quotes stays)."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


# ---------------------------------------------------------------- what each command needs, when not run

def _extras(text: str) -> list[str]:
    return re.findall(r"\.\[([a-z,]+)\]", text)


def check_install(cmd: Command) -> None:
    """pip/pipx/uv from the checkout: the target is this checkout ('.') and every extra it names exists."""
    assert re.search(r"(pip install|pipx install|uv tool install) (\.|'\.\[)", cmd.text), cmd.text
    for names in _extras(cmd.text):
        for name in names.split(","):
            assert name in PYPROJECT["project"]["optional-dependencies"], (cmd.text, name)


def check_scripts(cmd: Command) -> None:
    scripts = {**PYPROJECT["project"]["scripts"], **PYPROJECT["project"]["gui-scripts"]}
    for word in shlex.split(cmd.text.replace("\\", "/"), posix=True):
        name = Path(word).name.removesuffix(".exe")
        if name.startswith("desktop-memory"):
            assert name in scripts, (cmd.text, name)


def check_system_packages(cmd: Command) -> None:
    """The apt/dnf/pacman lines install exactly the packages of the libraries the start-up check looks for."""
    words = shlex.split(cmd.text)
    tool = {"apt": "debian", "dnf": "fedora", "pacman": "arch"}[words[1]]
    named = [w for w in words[3:] if not w.startswith("-")]
    assert named == list(dict.fromkeys(getattr(lib, tool) for lib in LIBS)), cmd.text


def check_cli_parses(cmd: Command) -> None:
    words = shlex.split(cmd.text.split("|")[-1] if cmd.text.startswith("printenv") else cmd.text)
    words = [w for w in words if w not in (">", "context.txt")]
    while words and (words[0] == "nice" or words[0].startswith("-n") or words[0].isdigit()):
        words = words[1:]
    assert words[0] == "desktop-memory", cmd.text
    build_parser().parse_args(words[1:])  # argparse exits on an option that does not exist


def check_files(cmd: Command) -> None:
    """Scripts, test files and modules a command names exist in the checkout."""
    for word in shlex.split(cmd.text):
        if re.fullmatch(r"(scripts|packaging|tests)/[\w/.-]+\.(sh|py)", word):
            assert (REPO / word).is_file(), (cmd.text, word)
    for module in re.findall(r"-m ((?:desktop_memory\w*|tests)(?:\.\w+)+)", cmd.text):
        assert importlib.util.find_spec(module) is not None, (cmd.text, module)


# (pattern, action, why it is not run here)
RULES: list[tuple[str, str, str]] = [
    (r"^sudo (apt|dnf|pacman) ", "packages", "needs root and the network"),
    (r"^python3 -m venv \.venv && \.venv/bin/pip install \. ", "install", "fetches the dependencies from PyPI"),
    (r"^py -m venv \.venv; \.venv\\Scripts\\pip install \.", "install", "Windows PowerShell"),
    (r"^(pipx install|uv tool install) ", "install", "fetches the dependencies from PyPI"),
    (r"^desktop-memory-gui$", "scripts", "opens the window (tests/gui drives it)"),
    (r"^bash scripts/test\.sh$", "files", "the test suite itself"),
    (r"^\.venv/bin/(ruff check \.|mypy|lint-imports)$", "by-hand", "the static checks (scripts/test.sh runs them)"),
    (r"^bash packaging/(build|ci_bundle_check)\.sh", "files", "builds the bundle (minutes; .ci/run does it)"),
    (r"^(QT_QPA_PLATFORM=offscreen )?dist/desktop-memory/", "scripts", "needs a built bundle"),
    (r"python -m pytest ", "files", "part of the test suite"),
    (r"^(nice -n \d+ )?(PYTHONPATH=\. )?python -m desktop_memory_bench\.", "files", "a benchmark (../shared/eval)"),
    (r"^(nice -n \d+ )?python scripts/bench_\w+\.py", "files", "a benchmark"),
    (r"^/tmp/tools/bin/(python -m build|twine check)", "by-hand", "needs build and twine from PyPI"),
    (r"^PYTHONPATH=\. (/work/main/\.venv|build/bundle-venv)/bin/python packaging/", "files", "needs the bundle venv"),
    (r"^python packaging/numpy_check\.py", "files", "compares two benchmark outputs"),
    (r"^python -m tests\.support\.openai_server", "files", "a server that runs until stopped"),
    (r"^python scripts/robustness_report\.py", "files", "runs the robustness suite"),
    (r"^(nice -n \d+ )?(python -m desktop_memory\.cli |desktop-memory )bench ", "bench", "needs ../shared/eval"),
    (r"^desktop-memory \[--db PATH\] mcp", "synopsis", "a usage synopsis"),
    (r"^desktop-memory (watch|mcp)\b", "cli", "runs until Ctrl+C"),
    (r"^desktop-memory embedder .*--test|^desktop-memory rerank --on .*--test", "cli", "needs that model server"),
    (r"^desktop-memory --db log\.db index app\.log", "cli", "a log file of the benchmark's"),
    (r"^echo \"\.\.\. WARN worker\[2\] .*>> app\.log$", "synopsis", "a step of that log benchmark"),
    (r"^bash packaging/build\.sh && cat dist/", "files", "builds the bundle"),
    (r"^desktop-memory .*postgresql://", "cli", "needs a PostgreSQL server (docs/SHARED.md)"),
    (r"^(desktop-memory |printenv MY_SERVER_KEY \| desktop-memory |mkdir -p /tmp/dm-demo|grep -a -c |stat -c |"
     r"python -c |sha256sum |cat ~/)", "run", ""),
]


def rule_for(cmd: Command) -> tuple[str, str]:
    for pattern, action, why in RULES:
        if re.search(pattern, cmd.text):
            return action, why
    raise AssertionError(f"{cmd.doc}: no rule for the command {cmd.text!r}: run it here or say why not")


def test_every_command_in_the_docs_is_run_or_checked():
    found = commands()
    assert len(found) >= 40, "the extraction finds the docs' commands"
    checks = {"install": check_install, "scripts": check_scripts, "packages": check_system_packages,
              "files": check_files, "cli": check_cli_parses, "synopsis": lambda c: None,
              "bench": lambda c: None, "run": lambda c: None, "by-hand": lambda c: None}
    for cmd in found:
        action, _ = rule_for(cmd)
        if cmd.shell == "bash":
            syntax = subprocess.run(["bash", "-n", "-c", cmd.text], capture_output=True, text=True, check=False)
            assert syntax.returncode == 0, (cmd.doc, cmd.text, syntax.stderr)
        checks[action](cmd)
        if action in {"install", "scripts"}:
            check_scripts(cmd)


# ---------------------------------------------------------------- the ones that run

@pytest.mark.slow
def test_the_runnable_commands_run_as_written(tmp_path):
    """In a copy of the docs, with `desktop-memory` and `python` on PATH as the Quick start's venv gives them and
    the hash embedder (the README's CLI examples with the real model: tests/cli/test_scripting.py). The privacy demo's
    /tmp paths and the default ~ folders are pointed at this test's temp folders."""
    work = tmp_path / "checkout"
    shutil.copytree(REPO / "docs", work / "docs")
    shutil.copyfile(REPO / "README.md", work / "README.md")
    config = write_settings(tmp_path / "config", embedder={"kind": "hash"})
    data = tmp_path / "data"
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name, target in (("desktop-memory", '"$0.py" -m desktop_memory.cli'), ("python", '"$0.py"')):
        (bindir / name).write_text(f'#!/bin/sh\nexec {target} "$@"\n'.replace('"$0.py"', f'"{sys.executable}"'))
        (bindir / name).chmod(0o755)
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}", DESKTOP_MEMORY_CONFIG_DIR=str(config),
               DESKTOP_MEMORY_DATA_DIR=str(data), DESKTOP_MEMORY_NO_KEYRING="1", PYTHONPATH=str(REPO),
               MY_SERVER_KEY="sk-docs-test-1234", PYTHONWARNINGS="ignore")
    demo = tmp_path / "dm-demo"
    ran = []
    for cmd in commands():
        if rule_for(cmd)[0] != "run":
            continue
        line = (cmd.text.replace("/tmp/dm-demo", str(demo)).replace("~/.local/share/desktop-memory", str(data))
                .replace("~/.config/desktop-memory", str(config)))
        proc = subprocess.run(["bash", "-c", "set -o pipefail\n" + line], capture_output=True, text=True, cwd=work,
                              env=env, timeout=300, check=False)
        ran.append(cmd.text)
        if line.startswith("grep -a -c "):  # the demo's point: 0 hits in each file (grep's exit code is then 1)
            assert proc.stdout and all(out.endswith(":0") for out in proc.stdout.split()), (line, proc.stdout)
            continue
        assert proc.returncode == 0, (cmd.doc, line, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr and "error:" not in proc.stderr, (cmd.doc, line, proc.stderr)
    assert any(c.startswith("desktop-memory search") for c in ran) and any("api-key set" in c for c in ran)
    assert any(c.startswith("grep -a -c") for c in ran) and any(c.startswith("sha256sum") for c in ran)
    assert (work / "context.txt").is_file()  # what it holds with the real model: tests/cli/test_scripting.py
    assert (config / "api-keys.json").is_file() and "sk-docs-test-1234" not in (work / "context.txt").read_text()
