"""A wheel's private Kerberos libraries give way to the host's, as Qt's already do (packaging/system_libs.py).

    python packaging/host_krb5.py dist/desktop-memory      (build.sh runs it through packaging/slim.py)

psycopg-binary's libpq links GSSAPI (Kerberos login to PostgreSQL), and auditwheel gave the wheel private copies of
MIT Kerberos (gssapi_krb5, krb5, k5crypto, krb5support, keyutils, com_err) plus libcrypt, 1.6 MB, under hashed
names. The bundle already takes GSSAPI from the desktop (libQt6Network links the host's ``libgssapi_krb5.so.2``),
so for each library that links a private copy:

- if it uses no symbol of it (every symbol it imports is versioned, none with that library's versions: libsasl2
  links the whole Kerberos stack and calls none of it), the ``DT_NEEDED`` entry is removed;
- if it uses symbols (libpq: 12 ``gss_*`` functions of version ``gssapi_krb5_2_MIT``), the entry is renamed to the
  host's soname, after checking that the build machine's copy defines every one of them with that version (MIT
  keeps ``gssapi_krb5_2_MIT`` stable across releases);
- anything else (an unversioned import, an unknown library) leaves the whole folder as it was.

The names are edited in place (a shorter name over the old one in ``.dynstr``; a removed entry shifts the rest of
the dynamic array up over it, ending in ``DT_NULL``); readelf then confirms each file's new list of needed libraries,
and the private copies no remaining file links are deleted, with the links PyInstaller made to them.
ci_bundle_check.sh's ``ldd`` pass and its PostgreSQL step prove the result loads and connects.
"""

from __future__ import annotations

import re
import struct
import subprocess
import sys
from pathlib import Path

# private name stem -> the host's soname (the libraries system_libs.py already leaves to the host)
HOST = {"gssapi_krb5": "libgssapi_krb5.so.2", "krb5": "libkrb5.so.3", "k5crypto": "libk5crypto.so.3",
        "krb5support": "libkrb5support.so.0", "keyutils": "libkeyutils.so.1", "com_err": "libcom_err.so.2"}
_PRIVATE = re.compile(r"^lib(gssapi_krb5|krb5|k5crypto|krb5support|keyutils|com_err|crypt)-[0-9a-f]{8}\.so[.\d]*$")
_DT_NULL, _DT_NEEDED, _DT_STRTAB, _PT_LOAD, _PT_DYNAMIC = 0, 1, 5, 1, 2


def _run(*args: str) -> str:
    return subprocess.run(list(args), check=True, capture_output=True, text=True).stdout


def needed(path: Path) -> list[str]:
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^]]+)\]", _run("readelf", "-d", "-W", str(path)))


def imports(path: Path) -> list[tuple[str, str | None]]:
    """(symbol, version or None) of every non-weak undefined dynamic symbol."""
    out = []
    for line in _run("nm", "-D", "--undefined-only", str(path)).splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            name, _, version = parts[1].partition("@")
            out.append((name, version.lstrip("@") or None))
    return out


def version_files(path: Path) -> dict[str, str]:
    """Version name -> the library file it is needed from (the ELF version needs section)."""
    result, current = {}, ""
    text = _run("readelf", "-V", "-W", str(path)).split("Version needs section", 1)
    for line in (text[1] if len(text) > 1 else "").splitlines():
        m = re.search(r"File: (\S+)", line)
        if m:
            current = m.group(1)
        m = re.search(r"Name: (\S+)", line)
        if m and current:
            result[m.group(1)] = current
    return result


def host_path(soname: str) -> Path | None:
    m = re.search(rf"^\s*{re.escape(soname)} \(libc6[^)]*\) => (\S+)$", _run("ldconfig", "-p"), re.M)
    return Path(m.group(1)) if m else None


def _segments(data: bytes) -> list[tuple[int, int, int, int]]:
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    # (p_type, p_offset, p_vaddr, p_filesz) of each program header
    return [struct.unpack_from("<I4xQQ8xQ", data, phoff + i * phentsize) for i in range(phnum)]


def edit(path: Path, changes: dict[str, str | None]) -> None:
    """Rename (new name) or remove (None) DT_NEEDED entries in place."""
    data = bytearray(path.read_bytes())
    segs = _segments(data)
    dyn = next(s for s in segs if s[0] == _PT_DYNAMIC)
    entries = [struct.unpack_from("<qQ", data, dyn[1] + 16 * i) for i in range(dyn[3] // 16)]
    strtab_vaddr = next(v for t, v in entries if t == _DT_STRTAB)
    load = next(s for s in segs if s[0] == _PT_LOAD and s[2] <= strtab_vaddr < s[2] + s[3])
    strtab = load[1] + strtab_vaddr - load[2]
    kept = []
    for tag, val in entries:
        if tag == _DT_NEEDED:
            end = data.index(b"\0", strtab + val)
            name = data[strtab + val:end].decode()
            if name in changes:
                new = changes[name]
                if new is None:
                    continue
                if len(new) > len(name):
                    raise ValueError(f"{path.name}: {new} is longer than {name}")
                data[strtab + val:end] = new.encode().ljust(len(name), b"\0")
        kept.append((tag, val))
    kept += [(_DT_NULL, 0)] * (len(entries) - len(kept))
    for i, (tag, val) in enumerate(kept):
        struct.pack_into("<qQ", data, dyn[1] + 16 * i, tag, val)
    path.write_bytes(bytes(data))


def plan_for(user: Path) -> dict[str, str | None]:
    """What to do with each private Kerberos library ``user`` links; raises ValueError when it cannot be done."""
    uses = imports(user)
    files = version_files(user)
    changes: dict[str, str | None] = {}
    for name in needed(user):
        m = _PRIVATE.match(name)
        if not m:
            continue
        wanted = [(s, v) for s, v in uses if v is not None and files.get(v) == name]
        if not wanted:
            if any(v is None for _s, v in uses):
                raise ValueError(f"{user.name} imports unversioned symbols: cannot tell whether it uses {name}")
            changes[name] = None
            continue
        soname = HOST.get(m.group(1))
        host = host_path(soname) if soname else None
        if host is None:
            raise ValueError(f"{user.name} uses {name} and the host has no {soname}")
        defined = set(_run("nm", "-D", "--defined-only", str(host)).split())
        lacking = [f"{s}@{v}" for s, v in wanted if not any(d.startswith(f"{s}@") and d.endswith(v) for d in defined)]
        if lacking:
            raise ValueError(f"{user.name}: the host's {soname} lacks {lacking}")
        changes[name] = soname
    return changes


def use_host(bundle: Path) -> int:
    """Apply the plan to every ``*.libs`` folder of the bundle; returns the bytes saved."""
    internal = bundle / "_internal" if (bundle / "_internal").is_dir() else bundle
    saved = 0
    for libs in sorted(p for p in internal.glob("*.libs") if p.is_dir()):
        files = [p for p in sorted(libs.iterdir()) if p.is_file() and not p.is_symlink()]
        package = internal / libs.name.removesuffix(".libs")
        users = [p for p in files if not _PRIVATE.match(p.name)]
        users += sorted(package.glob("*.so")) if package.is_dir() else []
        try:
            plans = {u: plan_for(u) for u in users}
        except ValueError as e:
            print(f"[krb5] {libs.name} kept as it is: {e}")
            continue
        for user, changes in plans.items():
            if changes:
                before = needed(user)
                edit(user, changes)
                expect = [changes.get(n, n) for n in before if changes.get(n, n) is not None]
                if needed(user) != expect:
                    raise SystemExit(f"[krb5] {user.name}: the edit went wrong: {needed(user)} != {expect}")
                print(f"[krb5] {user.relative_to(bundle)}: " + ", ".join(
                    f"{n} -> {v or 'removed (unused)'}" for n, v in changes.items()))
        still = {n for u in users for n in needed(u)}
        while True:  # a private library still linked keeps the private ones it links
            more = {n for p in files if p.name in still and _PRIVATE.match(p.name) for n in needed(p)} - still
            if not more:
                break
            still |= more
        for private in [p for p in files if _PRIVATE.match(p.name) and p.name not in still]:
            saved += private.stat().st_size
            # PyInstaller also puts a link to each collected library at the top of _internal/
            links = [p for p in internal.iterdir() if p.is_symlink() and p.resolve() == private.resolve()]
            private.unlink()
            for link in links:
                link.unlink()
            print(f"[krb5] {private.relative_to(bundle)} deleted (no bundled file links it), "
                  f"with {len(links)} link(s) to it")
    print(f"[krb5] -{saved / 1048576:.1f} MB")
    return saved


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    use_host(Path(sys.argv[1]))
