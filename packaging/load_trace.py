"""What the bundle carries that no front end loaded: the evidence for dropping a file (docs/PACKAGING.md).

`DM_LOAD_TRACE=DIR bash packaging/ci_bundle_check.sh` runs every front end of the bundle (CLI smoke, GUI smoke, PDF
and .docx indexing in the helper process, watch, the MCP server, the quick-search popup) with the dynamic loader's
own trace (``LD_DEBUG=files``: every shared library opened, by path) and the entry scripts' module trace
(``DIR/modules.<pid>``). This script reads both and prints the bundle's ELF files nobody loaded, largest first, and
how many Python modules were imported. A file listed here is a candidate, not a verdict: a library loaded only on
paths the check does not walk (a Wayland session, an encrypted PDF) is listed too, so each drop is decided by hand.

    python packaging/load_trace.py DIR dist/desktop-memory
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

_INIT = re.compile(r"calling init: (\S+)")


def loaded_libraries(trace_dir: Path) -> set[str]:
    """Real paths of every shared object some traced process ran the initialiser of."""
    seen: set[str] = set()
    for f in trace_dir.glob("ld.*"):
        for m in _INIT.finditer(f.read_text(encoding="utf-8", errors="replace")):
            seen.add(os.path.realpath(m.group(1)))
    return seen


def imported_modules(trace_dir: Path) -> set[str]:
    mods: set[str] = set()
    for f in trace_dir.glob("modules.*"):
        mods.update(line for line in f.read_text(encoding="utf-8").splitlines() if line)
    return mods


def is_elf(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def unloaded(bundle: Path, loaded: set[str]) -> list[tuple[int, str]]:
    """(size, path relative to the bundle) of each ELF file in it that no traced process loaded."""
    out = []
    for p in bundle.rglob("*"):
        # the executables run anyway
        if p.is_file() and not p.is_symlink() and is_elf(p) and p.parent != bundle \
                and os.path.realpath(p) not in loaded:
            out.append((p.stat().st_size, str(p.relative_to(bundle))))
    return sorted(out, reverse=True)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    trace_dir, bundle = Path(argv[0]), Path(argv[1]).resolve()
    loaded = loaded_libraries(trace_dir)
    if not loaded:
        print(f"no loader trace in {trace_dir} (run ci_bundle_check.sh with DM_LOAD_TRACE={trace_dir})")
        return 1
    in_bundle = {p for p in loaded if p.startswith(str(bundle) + os.sep)}
    mods = imported_modules(trace_dir)
    rows = unloaded(bundle, loaded)
    total = sum(s for s, _ in rows)
    print(f"{len(in_bundle)} bundled shared objects loaded; {len(mods)} Python modules imported "
          f"({len(list(trace_dir.glob('modules.*')))} processes)")
    print(f"{len(rows)} bundled ELF files never loaded, {total / 1048576:.1f} MB:")
    for size, rel in rows:
        print(f"  {size / 1048576:7.2f} MB  {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
