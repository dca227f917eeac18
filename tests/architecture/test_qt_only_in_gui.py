"""Qt only in the GUI: no module outside desktop_memory/gui imports PySide6, and the CLI and service load without it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "desktop_memory"


def test_core_never_imports_qt():
    """Only desktop_memory/gui may import PySide6 (checked on the source, so lazy imports count too)."""
    offenders = []
    for py in PKG.rglob("*.py"):
        rel = py.relative_to(PKG)
        if rel.parts[0] == "gui" or rel.name == "__main__.py":
            continue
        tree = ast.parse(py.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] if node.level == 0 else [f".{node.module}"]
            if any(n.startswith(("PySide6", "PyQt", ".gui")) or n == "gui" for n in names):
                offenders.append(str(rel))
    assert offenders == []


def test_cli_import_loads_no_qt():
    code = "import sys, desktop_memory.cli, desktop_memory.service; print('PySide6' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
