"""Make a built bundle smaller without changing what it runs: strip symbols, trim ICU's data (docs/PACKAGING.md).

    python packaging/slim.py dist/desktop-memory

1. ``strip --strip-unneeded`` on every ELF file that has a symbol table: the pyenv libpython (22 MB, 17 of them
   symbols), the Rust extensions (tokenizers, cryptography), the Python extension modules, ICU's code libraries.
   Debug symbols are for debuggers; the dynamic symbols the loader needs are a separate table that strip keeps.
   Libraries that auditwheel edited with patchelf (numpy's OpenBLAS, gfortran) come out of GNU strip and llvm-strip
   with segments the loader refuses ("ELF load command address/offset not page-aligned"): every stripped file is
   checked the way glibc checks it (each PT_LOAD's offset and address agree modulo its alignment) and the original
   is kept when the check fails.
2. ``libicudata`` is rebuilt with only the ICU data Qt reads (packaging/icu_data.py).
3. A wheel's private OpenSSL (psycopg-binary's) becomes links to the bundle's own libssl/libcrypto when the ABI
   versions it needs are there (packaging/shared_openssl.py), and its private Kerberos copies give way to the host's
   GSSAPI, as Qt's do (packaging/host_krb5.py): 8.2 MB of the driver's 10.8 MB.

Prints what each step saved. Without ``strip`` or ``gcc`` on the machine that step is skipped with a message (the
bundle still works; ci_bundle_check.sh's size limit then says so).
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import host_krb5
import icu_data
import shared_openssl

_PT_LOAD = 1
_SHT_SYMTAB = 2


def elf_kind(path: Path) -> bytes | None:
    """The first 64 bytes of a 64-bit little-endian ELF file, else None."""
    try:
        with path.open("rb") as f:
            head = f.read(64)
    except OSError:
        return None
    return head if head[:4] == b"\x7fELF" and head[4] == 2 and head[5] == 1 else None


def loadable(path: Path) -> bool:
    """Whether every PT_LOAD segment has offset ≡ address (mod alignment), as glibc's loader requires."""
    data = path.read_bytes()
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    for i in range(phnum):
        p_type, _flags, p_offset, p_vaddr = struct.unpack_from("<IIQQ", data, phoff + i * phentsize)
        p_align, = struct.unpack_from("<Q", data, phoff + i * phentsize + 48)
        if p_type == _PT_LOAD and p_align > 1 and (p_offset - p_vaddr) % p_align:
            return False
    return True


def has_symtab(path: Path) -> bool:
    data = path.read_bytes()
    shoff, = struct.unpack_from("<Q", data, 40)
    shentsize, shnum = struct.unpack_from("<HH", data, 58)
    if not shoff:
        return False
    return any(struct.unpack_from("<I", data, shoff + i * shentsize + 4)[0] == _SHT_SYMTAB for i in range(shnum))


def strip_all(bundle: Path) -> tuple[int, int, list[str]]:
    """Strip every ELF file with a symbol table in place; (files stripped, bytes saved, files kept as they were)."""
    stripped, saved, refused = 0, 0, []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "stripped"
        for path in sorted(bundle.rglob("*")):
            if path.parent == bundle:  # the executables: PyInstaller appends the program's archive to them
                continue
            if path.is_symlink() or not path.is_file() or elf_kind(path) is None or not has_symtab(path):
                continue
            subprocess.run(["strip", "--strip-unneeded", "-o", str(out), str(path)], check=True,
                           capture_output=True)
            if not loadable(out):
                refused.append(str(path.relative_to(bundle)))
                continue
            before = path.stat().st_size
            mode = path.stat().st_mode
            shutil.copyfile(out, path)
            path.chmod(mode)
            stripped += 1
            saved += before - path.stat().st_size
    return stripped, saved, refused


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    bundle = Path(argv[0])
    mb = 1048576
    if shutil.which("strip"):
        n, saved, refused = strip_all(bundle)
        print(f"[slim] stripped {n} ELF files: -{saved / mb:.1f} MB; kept unstripped (strip would break their "
              f"segment layout): {', '.join(Path(r).name for r in refused) or 'none'}")
    else:
        print("[slim] no `strip` on this machine: symbols stay (install binutils)")
    libs = sorted(p for p in bundle.rglob("libicudata.so.*") if p.is_file() and not p.is_symlink())
    if libs and shutil.which("gcc") and shutil.which("readelf"):
        for lib in libs:
            items, kept, before, after = icu_data.trim_library(lib)
            print(f"[slim] {lib.name}: kept {kept} of {items} ICU data items, {before / mb:.1f} -> {after / mb:.1f} MB")
    elif libs:
        print("[slim] no gcc/readelf on this machine: ICU's data library stays whole")
    if shutil.which("readelf") and shutil.which("nm") and shutil.which("ldconfig"):
        shared = shared_openssl.share(bundle)
        print(f"[slim] one OpenSSL: -{sum(n for _p, n in shared) / mb:.1f} MB")
        host_krb5.use_host(bundle)
    else:
        print("[slim] no readelf/nm/ldconfig on this machine: wheels keep their private OpenSSL and Kerberos")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
