"""One OpenSSL in the bundle: a wheel's private libssl/libcrypto become links to the copy the bundle already has.

    python packaging/shared_openssl.py dist/desktop-memory      (build.sh runs it through packaging/slim.py)

auditwheel gives every binary wheel its own OpenSSL under a hashed name (psycopg-binary: libpq links
``psycopg_binary.libs/libssl-<hash>.so.3`` and ``libcrypto-<hash>.so.3``, 6.6 MB), although the bundle already
carries ``libssl.so.3`` / ``libcrypto.so.3`` for Python's ``ssl`` and ``hashlib``. OpenSSL 3 keeps its ABI within
major version 3 and versions every symbol (OPENSSL_3.0.0, OPENSSL_3.2.0, ...): a private copy is replaced by a
relative symlink to the bundle's copy only when every version the libraries linking it ask for (their ELF version
needs, ``readelf -V``) is one the bundle's copy defines; otherwise it stays as it is. One OpenSSL in the process
also means one set of TLS defaults and one FIPS/config state instead of two versions side by side.
ci_bundle_check.sh then runs ``ldd`` on every file and connects to a real PostgreSQL through the bundled driver.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

_PRIVATE = re.compile(r"^lib(ssl|crypto)-[0-9a-f]{8}\.so\.3$")


def _readelf_v(path: Path) -> str:
    return subprocess.run(["readelf", "-V", "-W", str(path)], check=True, capture_output=True, text=True).stdout


def versions_needed(user: Path, soname: str) -> set[str] | None:
    """The symbol versions ``user`` needs from the library named ``soname``; None if it does not link it."""
    found: set[str] | None = None
    current = None
    for line in _readelf_v(user).splitlines():
        file_m = re.search(r"File: (\S+)", line)
        if file_m:
            current = file_m.group(1)
            if current == soname:
                found = found or set()
            continue
        name_m = re.search(r"Name: (\S+)", line)
        if name_m and current == soname and found is not None:
            found.add(name_m.group(1))
    return found


def versions_defined(lib: Path) -> set[str]:
    """The symbol versions a library defines (its version definition section)."""
    text = _readelf_v(lib)
    section = text.split("Version definition section", 1)[-1].split("Version needs section", 1)[0]
    return set(re.findall(r"Name: (OPENSSL_\S+)", section))


def share(bundle: Path) -> list[tuple[str, int]]:
    """Replace each compatible private OpenSSL library by a link; [(its path in the bundle, bytes saved)]."""
    internal = bundle / "_internal" if (bundle / "_internal").is_dir() else bundle
    done: list[tuple[str, int]] = []
    for libs in sorted(p for p in internal.glob("*.libs") if p.is_dir()):
        elves = [p for p in sorted(libs.iterdir()) if p.is_file() and not p.is_symlink()]
        package = internal / libs.name.removesuffix(".libs")
        if package.is_dir():
            elves += [p for p in sorted(package.glob("*.so")) if p.is_file()]
        privates = [p for p in elves if _PRIVATE.match(p.name)]
        users = [p for p in elves if not _PRIVATE.match(p.name)]  # the private libssl and libcrypto go together
        plan: list[tuple[Path, Path, set[str]]] = []
        for private in privates:
            shared = internal / f"lib{_PRIVATE.match(private.name).group(1)}.so.3"  # type: ignore[union-attr]
            if not shared.is_file():
                print(f"[openssl] {private.name}: the bundle has no {shared.name}: {libs.name} kept")
                break
            needed: set[str] = set()
            for user in users:
                needed |= versions_needed(user, private.name) or set()
            missing = needed - versions_defined(shared)
            if missing:
                print(f"[openssl] {private.name}: its users need {sorted(missing)}, which {shared.name} lacks: "
                      f"{libs.name} kept")
                break
            plan.append((private, shared, needed))
        else:
            for private, shared, needed in plan:
                size = private.stat().st_size
                private.unlink()
                private.symlink_to(os.path.relpath(shared, private.parent))
                done.append((str(private.relative_to(bundle)), size))
                print(f"[openssl] {private.relative_to(bundle)} -> {shared.name} (its users need {sorted(needed)}): "
                      f"-{size / 1048576:.1f} MB")
    return done


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    share(Path(sys.argv[1]))
