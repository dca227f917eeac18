"""Ignore rules with gitignore semantics: .gitignore/.dmignore inside indexed folders (nested ones too) and the
person's own patterns, relative to the folder; the Library and `list` say why a file was left out."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from desktop_memory.config import IngestSettings, Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.ingest.walk import walk_paths
from desktop_memory.service import MemoryService
from tests.conftest import MDDOCS
from tests.support.cli import run_cli, write_settings

TUTORIAL = MDDOCS / "fastapi" / "tutorial"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A real folder of Markdown docs with a build folder, logs, drafts and ignore files at two levels."""
    root = tmp_path / "project"
    docs = root / "docs"
    docs.mkdir(parents=True)
    for name in ("query-params.md", "path-params.md", "body.md"):
        shutil.copy(TUTORIAL / name, docs / name)
    shutil.copy(TUTORIAL / "cookie-params.md", root / "README.md")
    shutil.copy(TUTORIAL / "header-params.md", docs / "header-params.draft.md")
    (root / "out").mkdir()
    (root / "out" / "report.md").write_text("# Built report\n", encoding="utf-8")
    (root / "server.log").write_text("started\n", encoding="utf-8")
    (root / "keep.log").write_text("kept on purpose\n", encoding="utf-8")
    (root / ".gitignore").write_text("# build output\nout/\n*.log\n!keep.log\n", encoding="utf-8")
    (docs / ".dmignore").write_text("*.draft.md\n", encoding="utf-8")
    return root


def reasons(root: Path, settings: IngestSettings) -> dict[str, str | None]:
    return {str(Path(e.path).relative_to(root)): e.skip_reason for e in walk_paths([root], settings)}


def test_gitignore_and_nested_dmignore(project: Path) -> None:
    got = reasons(project, IngestSettings())
    assert got["out"] == "ignored by .gitignore: out/"
    assert got["server.log"] == "ignored by .gitignore: *.log"
    assert got["keep.log"] is None, "!keep.log re-includes it"
    assert got["docs/header-params.draft.md"] == "ignored by docs/.dmignore: *.draft.md"
    assert got["docs/query-params.md"] is None and got["README.md"] is None


def test_user_patterns_are_relative_to_the_folder(project: Path) -> None:
    got = reasons(project, IngestSettings(extra_ignore=("docs/*.md", "/README.md")))
    assert got["docs/query-params.md"] == "ignored by your pattern: docs/*.md"
    assert got["README.md"] == "ignored by your pattern: /README.md"
    nested = project / "docs" / "README.md"
    shutil.copy(project / "README.md", nested)
    assert reasons(project, IngestSettings(extra_ignore=("/README.md",)))["docs/README.md"] is None, "anchored"


def test_ignore_files_can_be_turned_off(project: Path) -> None:
    got = reasons(project, IngestSettings(use_ignore_files=False))
    assert got["server.log"] is None and got["docs/header-params.draft.md"] is None


def test_a_gitignore_above_the_indexed_folder_does_not_count(project: Path) -> None:
    got = reasons(project / "docs", IngestSettings())
    assert got["header-params.draft.md"] == "ignored by .dmignore: *.draft.md"
    (project / ".gitignore").write_text("*.md\n", encoding="utf-8")
    assert reasons(project / "docs", IngestSettings())["query-params.md"] is None


def test_library_and_list_say_why(project: Path, tmp_path: Path) -> None:
    svc = MemoryService(Settings(), db_path=tmp_path / "lib.db", embedder=HashEmbedder(32))
    try:
        summary = svc.index_paths([project])
        skipped = {Path(o.path).name: o.reason for o in summary.outcomes if o.status == "skipped"}
        assert skipped["out"] == "ignored by .gitignore: out/"
        docs = {Path(d.path).name: d for d in svc.documents()}
        assert docs["server.log"].status == "skipped" and docs["server.log"].error == "ignored by .gitignore: *.log"
        assert docs["query-params.md"].status == "indexed"
    finally:
        svc.close()
    config = write_settings(tmp_path / "config", embedder={"kind": "hash"})
    out = run_cli(tmp_path / "lib.db", "list", "--status", "skipped", config=config)
    assert out.returncode == 0
    assert "ignored by docs/.dmignore: *.draft.md" in out.stdout and "ignored by .gitignore: *.log" in out.stdout


def test_the_watcher_applies_the_same_rules(project: Path) -> None:
    """A changed path is judged by name_skip_reason with the walk's rules, ignore files included."""
    from desktop_memory.ingest.walk import name_skip_reason

    settings = IngestSettings(extra_ignore=("/README.md",))
    root = str(project)
    assert name_skip_reason(str(project / "server.log"), root, settings) == "ignored by .gitignore: *.log"
    assert name_skip_reason(str(project / "out" / "new.md"), root, settings) == "ignored by .gitignore: out/"
    assert name_skip_reason(str(project / "docs" / "x.draft.md"), root, settings) == \
        "ignored by docs/.dmignore: *.draft.md"
    assert name_skip_reason(str(project / "README.md"), root, settings) == "ignored by your pattern: /README.md"
    assert name_skip_reason(str(project / "keep.log"), root, settings) is None
    assert name_skip_reason(str(project / "docs" / "new.md"), root, settings) is None


def test_an_invalid_line_in_an_ignore_file_is_skipped_not_fatal(project: Path) -> None:
    (project / ".gitignore").write_text("!\n*.log\nfoo\\\n", encoding="utf-8")  # "!" and "foo\\" are invalid
    got = reasons(project, IngestSettings())
    assert got["server.log"] == "ignored by .gitignore: *.log" and got["README.md"] is None
