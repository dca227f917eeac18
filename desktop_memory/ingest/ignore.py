"""Ignore rules with gitignore semantics (pathspec): the person's patterns and the .gitignore/.dmignore files.

- Patterns from Settings (``[ingest] extra_ignore``) are matched against the path *relative to the indexed folder*,
  exactly as a .gitignore at the folder's top would: ``*.log`` anywhere, ``docs/*.md`` only there, ``drafts/``
  folders only, ``/TODO.md`` at the top only, ``!keep.log`` re-includes.
- ``.gitignore`` and ``.dmignore`` (our own file, same syntax, for rules a person does not want in git) are read in
  every folder walked, and apply to that folder and below, deeper files winning, as git does. Only files inside
  the indexed folder count (a .gitignore above it belongs to another project).
- A folder that is ignored is not entered, so nothing under it can be re-included (git's rule too).

The reason names the rule's source and pattern: ``ignored by .gitignore: build/``, ``ignored by
docs/.dmignore: *.draft.md``, ``ignored by your pattern: docs/*.md``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import pathspec

IGNORE_FILES = (".gitignore", ".dmignore")
MAX_IGNORE_FILE_BYTES = 1024 * 1024  # a huge "ignore file" is not one: leave it alone


@dataclass(frozen=True)
class _Rules:
    base: str  # folder the patterns are relative to ("" = the indexed folder itself)
    source: str  # shown in the reason
    spec: pathspec.GitIgnoreSpec
    lines: tuple[str, ...]  # the patterns as written, by index in spec.patterns


def valid_pattern(line: str) -> bool:
    """pathspec accepts the line (git itself ignores lines such as a lone "!" or a trailing backslash)."""
    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except ValueError:
        return False
    return True


def _compile(lines: Sequence[str]) -> tuple[pathspec.GitIgnoreSpec, tuple[str, ...]]:
    """The spec of the valid lines; an invalid line is skipped, as git does, instead of dropping the whole file."""
    kept = tuple(line for line in (raw.rstrip("\n") for raw in lines) if valid_pattern(line))
    return pathspec.GitIgnoreSpec.from_lines(kept), kept


class IgnoreRules:
    """The rules for one indexed folder; ``enter`` each folder before asking about its entries."""

    def __init__(self, root: str, patterns: Sequence[str], use_files: bool = True) -> None:
        self.root = root
        self._prefix = root if root.endswith(os.sep) else root + os.sep
        self.use_files = use_files
        self._by_dir: dict[str, list[_Rules]] = {}
        spec, lines = _compile([p for p in patterns if p.strip()])
        self._user = _Rules("", "your pattern", spec, lines) if lines else None

    def enter(self, folder: str) -> str | None:
        """Read the folder's .gitignore/.dmignore; returns a note when one could not be read (else None)."""
        if not self.use_files:
            return None
        rel = self._rel(folder)
        if rel is None:
            return None
        found: list[_Rules] = []
        problem = None
        for name in IGNORE_FILES:
            path = os.path.join(folder, name)
            try:
                if not os.path.isfile(path) or os.path.getsize(path) > MAX_IGNORE_FILE_BYTES:
                    continue
                with open(path, encoding="utf-8", errors="replace") as fh:
                    spec, lines = _compile(fh.read().splitlines())
            except (OSError, ValueError) as exc:  # unreadable, or a pattern pathspec cannot compile
                problem = f"{name} in {folder} was not applied: {exc}"
                continue
            if lines:
                found.append(_Rules(rel, f"{rel}/{name}" if rel else name, spec, lines))
        if found:
            self._by_dir[rel] = found
        return problem

    def reason(self, path: str, is_dir: bool) -> str | None:
        """Why ``path`` is left out, or None. Deeper ignore files win over shallower ones, the person's own
        patterns over every file (they are checked last)."""
        if not self._by_dir and self._user is None:
            return None  # no rules anywhere in this folder so far: nothing to compute
        rel = self._rel(path)
        if not rel:
            return None
        verdict: str | None = None
        for rules in self._applicable(rel):
            sub = rel[len(rules.base) + 1:] if rules.base else rel
            verdict = self._check(rules, sub, is_dir, verdict)
        if self._user is not None:
            verdict = self._check(self._user, rel, is_dir, verdict)
        return verdict

    @staticmethod
    def _check(rules: _Rules, rel: str, is_dir: bool, verdict: str | None) -> str | None:
        result = rules.spec.check_file(rel + "/" if is_dir else rel)
        if result.include is None or result.index is None:
            return verdict
        if result.include:
            return f"ignored by {rules.source}: {rules.lines[result.index].strip()}"
        return None  # a "!pattern" re-includes what an earlier rule left out

    def _applicable(self, rel: str) -> list[_Rules]:
        """Rules of the folders above ``rel`` inside the root, shallowest first."""
        out = list(self._by_dir.get("", ()))
        parts = rel.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            out += self._by_dir.get("/".join(parts[:depth]), ())
        return out

    def _rel(self, path: str) -> str | None:
        """``path`` relative to the root with "/" separators ("" for the root), or None when outside it."""
        if path == self.root:
            return ""
        if path.startswith(self._prefix):  # the walk joins names onto the root: no need for relpath's syscalls
            rel = path[len(self._prefix):]
            return rel.replace(os.sep, "/") if os.sep != "/" else rel
        try:
            rel = os.path.relpath(path, self.root)
        except ValueError:  # another drive on Windows
            return None
        if rel == ".":
            return ""
        if rel.startswith(".."):
            return None
        return rel.replace(os.sep, "/")
