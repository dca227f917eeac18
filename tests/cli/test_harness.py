"""The product does not import its harness (issue 24): `bench` and the GUI benchmarks are found by entry point, and
the benchmarks say plainly when the full evaluation data (../shared/eval) is not there."""

from __future__ import annotations

import ast
from pathlib import Path

import desktop_memory
from desktop_memory.cli import main
from desktop_memory.harness import CLI_COMMANDS, GUI_BENCHMARKS, find


def test_no_module_of_the_app_imports_the_harness():
    offenders = []
    for path in Path(desktop_memory.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] == "desktop_memory_bench"]
    assert offenders == []


def test_the_harness_is_found_through_its_entry_points():
    from desktop_memory_bench import soak, stall_bench
    from desktop_memory_bench.command import add_bench_parser

    assert find(CLI_COMMANDS, "bench") is add_bench_parser
    assert find(GUI_BENCHMARKS, "soak-bench") is soak.main
    assert find(GUI_BENCHMARKS, "stall-bench") is stall_bench.main
    assert find(GUI_BENCHMARKS, "no-such-bench") is None


def test_a_benchmark_without_its_data_says_where_it_looked(tmp_path, capsys):
    assert main(["bench", str(tmp_path / "scifact"), "--embedder", "hash"]) == 1
    err = capsys.readouterr().err
    assert f"benchmark data not found: {tmp_path / 'scifact'}" in err
    assert "../shared/eval" in err and "tests/data/eval" in err
