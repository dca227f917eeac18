"""Shared fixtures: isolated config/data dirs so no test touches the real user folders. The one conftest that owns the
suite's data path (EVAL) and the Qt platform."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Qt draws offscreen in every test (GUI, bad input, robustness): set here, before any test module imports Qt.
os.environ["QT_QPA_PLATFORM"] = "offscreen"

# The one place the suite's data lives: a small copy of ../shared/eval inside the repository (tests/data/eval/README.md
# says what is there and where it comes from), so a fresh clone with nothing beside it runs every test.
EVAL = Path(__file__).resolve().parent / "data" / "eval"
MDDOCS = EVAL / "mddocs"
PDFS = EVAL / "pdfs"
OFFICE = EVAL / "office"


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path_factory, monkeypatch):
    base = tmp_path_factory.mktemp("userdirs")
    monkeypatch.setenv("DESKTOP_MEMORY_CONFIG_DIR", str(base / "config"))
    monkeypatch.setenv("DESKTOP_MEMORY_DATA_DIR", str(base / "data"))
    monkeypatch.setenv("DESKTOP_MEMORY_NO_KEYRING", "1")  # model-server API keys: the file, never a real keyring
    for name in ("EMBEDDER", "RERANK", "DATABASE"):
        monkeypatch.delenv(f"DESKTOP_MEMORY_{name}_API_KEY", raising=False)
    monkeypatch.delenv("DESKTOP_MEMORY_DB", raising=False)  # a library named in the environment: never in tests


@pytest.fixture(scope="session")
def eval_dir() -> Path:
    assert (PDFS / "manifest.tsv").is_file() and MDDOCS.is_dir(), f"test data expected at {EVAL}"
    return EVAL
