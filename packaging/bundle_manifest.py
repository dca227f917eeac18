"""The bundle's plain list of what is inside: name, version and licence of every distribution that ships in it.

Why from the build itself: the spec knows exactly which Python modules, libraries and data files PyInstaller put
into the bundle (``Analysis.pure`` / ``.binaries`` / ``.datas``). Their top-level names are mapped to installed
distributions with ``importlib.metadata.packages_distributions()``, so the list names what is really inside (not
the build tools, not the packages the spec excludes) and a person can audit it without unpacking anything.
Written to ``dist/desktop-memory/THIRD-PARTY.txt`` by ``packaging/desktop-memory.spec``.
"""

from __future__ import annotations

import importlib.metadata as md
import platform
import sys
from collections.abc import Iterable
from pathlib import Path

MANIFEST_NAME = "THIRD-PARTY.txt"


def licence_of(dist: md.Distribution) -> str:
    """A short licence name: License-Expression, else the License field's first line, else the classifiers."""
    meta = dist.metadata
    expression = (meta.get("License-Expression") or "").strip()
    if expression:
        return expression
    field = (meta.get("License") or "").strip()
    if field and field.upper() != "UNKNOWN":
        first = field.splitlines()[0].strip()
        if len(first) <= 60:
            return first
    classifiers = [c.split(" :: ")[-1] for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
    if classifiers:
        return " / ".join(classifiers)
    return f"{field.splitlines()[0][:57]}..." if field else "see its files"


def top_level_names(module_names: Iterable[str], file_dests: Iterable[str]) -> set[str]:
    """First component of every bundled module name and every bundled file's destination path."""
    names = {m.split(".")[0] for m in module_names if m}
    for dest in file_dests:
        first = dest.replace("\\", "/").split("/")[0]
        names.add(first.split(".")[0] if first.endswith((".so", ".pyd", ".dll", ".dylib")) else first)
    return names


def bundled_distributions(names: Iterable[str]) -> list[tuple[str, str, str]]:
    """(name, version, licence) of the installed distributions that provide any of ``names``, sorted by name."""
    owners = md.packages_distributions()
    found: dict[str, tuple[str, str, str]] = {}
    for name in names:
        for dist_name in owners.get(name, []):
            key = dist_name.lower().replace("_", "-")
            if key in found:
                continue
            try:
                dist = md.distribution(dist_name)
            except md.PackageNotFoundError:
                continue
            found[key] = (dist.metadata["Name"] or dist_name, dist.version, licence_of(dist))
    return sorted(found.values(), key=lambda row: row[0].lower())


def render(app: tuple[str, str, str], rows: list[tuple[str, str, str]]) -> str:
    python = (f"Python {platform.python_version()}", "PSF-2.0", "the interpreter and its standard library")
    lines = [
        f"What is inside {app[0]} {app[1]} (licence {app[2]}), generated when this bundle was built",
        f"({platform.system()} {platform.machine()}, {python[0]}). One line per distribution: name, version, licence.",
        "The exact files the build installed are pinned with their sha256 in packaging/requirements-bundle.lock.",
        "",
    ]
    table = [app, (python[0].split()[0], platform.python_version(), python[1]), *rows]
    width = max(len(r[0]) for r in table)
    vwidth = max(len(r[1]) for r in table)
    lines += [f"{name:<{width}}  {version:<{vwidth}}  {licence}" for name, version, licence in table]
    return "\n".join(lines) + "\n"


def write_manifest(target_dir: Path, app: tuple[str, str, str], module_names: Iterable[str],
                   file_dests: Iterable[str]) -> Path:
    rows = bundled_distributions(top_level_names(module_names, file_dests))
    rows = [r for r in rows if r[0].lower() != app[0].lower()]
    path = Path(target_dir) / MANIFEST_NAME
    path.write_text(render(app, rows), encoding="utf-8")
    print(f"[bundle_manifest] {path}: {len(rows)} distributions", file=sys.stderr)
    return path
