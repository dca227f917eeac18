"""The real command line in a subprocess (``python -m desktop_memory.cli``), with its own settings file: what the
robustness, bad-input, CLI and watch suites run, and how a background one is started, finished or killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import tomli_w

REPO = Path(__file__).resolve().parents[2]


def write_settings(config_dir: Path, **sections: dict[str, Any]) -> Path:
    """settings.toml for a CLI subprocess (``DESKTOP_MEMORY_CONFIG_DIR`` points at ``config_dir``)."""
    config_dir.mkdir(parents=True, exist_ok=True)
    path = config_dir / "settings.toml"
    path.write_text(tomli_w.dumps(sections), encoding="utf-8")
    return config_dir


def cli_env(config_dir: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ, DESKTOP_MEMORY_CONFIG_DIR=str(config_dir), PYTHONWARNINGS="ignore",
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.update(extra)
    return env


def cli_cmd(db: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "desktop_memory.cli", "--db", str(db), *map(str, args)]


def run_cli(db: Path, *args: str, config: Path, timeout: float = 240, prefix: list[str] | None = None,
            **env: str) -> subprocess.CompletedProcess:
    return subprocess.run((prefix or []) + cli_cmd(db, *args), capture_output=True, text=True, cwd=REPO,
                          env=cli_env(config, **env), timeout=timeout, check=False)


def spawn_cli(db: Path, *args: str, config: Path, logs: Path, **env: str) -> subprocess.Popen:
    """Start the CLI in the background; stdout/stderr go to files (a full pipe must never block it)."""
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / "stdout", "w") as out, open(logs / "stderr", "w") as err:  # the child keeps its own copies
        proc = subprocess.Popen(cli_cmd(db, *args), stdout=out, stderr=err, cwd=REPO, env=cli_env(config, **env),
                                start_new_session=True)
    proc._logs = (out, err, logs)  # type: ignore[attr-defined]
    return proc


def finish(proc: subprocess.Popen, timeout: float = 240) -> tuple[int, str, str]:
    try:
        rc = proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
        raise AssertionError(f"CLI did not finish within {timeout} s") from None
    out, err, logs = proc._logs  # type: ignore[attr-defined]
    out.close()
    err.close()
    return rc, (logs / "stdout").read_text(), (logs / "stderr").read_text()


def kill9(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    out, err, _ = proc._logs  # type: ignore[attr-defined]
    out.close()
    err.close()


def children_of(pid: int) -> set[int]:
    kids: set[int] = set()
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                kids |= {int(x) for x in fh.read().split()}
    except OSError:
        pass
    return kids


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except OSError:
        return False
