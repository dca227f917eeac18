"""The bundle's slimming steps (packaging/slim.py, icu_data.py, system_libs.py) on real files: PySide6's own ICU
data library and Python's own shared library, not fakes."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
QT_LIB = Path(importlib.util.find_spec("PySide6").origin).parent / "Qt" / "lib"  # type: ignore[arg-type,union-attr]
ICU_DATA = next(iter(sorted(QT_LIB.glob("libicudata.so.*"))), None)
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux") or ICU_DATA is None,
                                reason="the ELF/ICU steps apply to the Linux bundle")


def _load(name: str):
    sys.path.insert(0, str(ROOT / "packaging"))
    try:
        spec = importlib.util.spec_from_file_location(name, ROOT / "packaging" / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
        return mod
    finally:
        sys.path.remove(str(ROOT / "packaging"))


def test_icu_keep_rules():
    icu = _load("icu_data")
    for kept in ("coll/root.res", "coll/de.res", "coll/ucadata.icu", "cnvalias.icu", "root.res", "en.res",
                 "res_index.res", "pool.res", "supplementalData.res", "zoneinfo64.res", "metaZones.res",
                 "likelySubtags.res", "nfkc.nrm", "uemoji.icu"):
        assert icu.keep(kept, 1000), kept
    assert icu.keep("ibm-5348_P100-1997.cnv", 2_000)  # windows-1252: single-byte, small
    assert not icu.keep("ibm-943_P15A-2003.cnv", 200_000)  # Shift-JIS: a large multi-byte table
    for dropped in ("brkitr/cjdict.dict", "zone/de.res", "lang/fr.res", "curr/en.res", "unit/ja.res",
                    "translit/root.res", "rbnf/en.res", "region/de.res", "de.res", "fr_CA.res", "sr_Latn_BA.res",
                    "rfc3491.spp", "confusables.cfu", "unames.icu"):
        assert not icu.keep(dropped, 1000), dropped


@linux_only
def test_icu_package_round_trips_byte_for_byte():
    icu = _load("icu_data")
    _symbol, package = icu.package_from_library(ICU_DATA)
    header, items = icu.read_items(package)
    assert len(items) > 1000 and all(n.startswith("icudt") for n, _ in items)
    assert icu.write_items(header, items) == package


@linux_only
@pytest.mark.skipif(shutil.which("gcc") is None, reason="the trimmed library is assembled with gcc")
def test_trimmed_icu_sorts_and_converts_like_the_full_one(tmp_path: Path):
    """Qt's collation and single-byte converters answer the same with the trimmed data; CJK tables are gone."""
    icu = _load("icu_data")
    lib = tmp_path / ICU_DATA.name
    shutil.copyfile(ICU_DATA, lib)
    items, kept, before, after = icu.trim_library(lib)
    assert kept < items / 5 and after < before / 4
    probe = (
        "import functools\n"
        "from PySide6.QtCore import QCollator, QLocale, QStringDecoder\n"
        "w = ['Äpfel', 'apfel', 'Zebra', 'öl', 'Ofen', 'file10', 'file2', 'čaj', 'cukr', 'Ångström', '中国', '日本']\n"
        "for loc in ('en_US', 'de_DE', 'sv_SE', 'cs_CZ', 'zh_CN'):\n"
        "    c = QCollator(QLocale(loc)); c.setNumericMode(True)\n"
        "    print(loc, sorted(w, key=functools.cmp_to_key(c.compare)))\n"
        "for enc in ('windows-1252', 'KOI8-R', 'ISO-8859-15', 'Shift_JIS'):\n"
        "    print(enc, QStringDecoder(enc).isValid())\n"
    )

    def run(env_lib: Path | None) -> list[str]:
        env = dict(os.environ)
        if env_lib is not None:
            env["LD_LIBRARY_PATH"] = str(env_lib)  # wins over Qt's RUNPATH for libicuuc's libicudata
        out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
        return out.stdout.splitlines()

    full, trimmed = run(None), run(tmp_path)
    assert full[:5] == trimmed[:5]  # every locale's collation (sv sorts Å/Ä/Ö after z, cs č after c)
    assert "sv_SE" in trimmed[2] and trimmed[2].index("Ångström") > trimmed[2].index("Zebra")
    assert trimmed[5:8] == ["windows-1252 True", "KOI8-R True", "ISO-8859-15 True"]
    assert full[8] == "Shift_JIS True" and trimmed[8] == "Shift_JIS False"  # the documented loss


def _dynamic_symbols(lib: Path) -> int:
    out = subprocess.run(["readelf", "-W", "--dyn-syms", str(lib)], capture_output=True, text=True, check=True)
    return sum(1 for line in out.stdout.splitlines() if line.strip()[:1].isdigit())


@linux_only
@pytest.mark.skipif(shutil.which("strip") is None, reason="needs binutils' strip")
def test_strip_keeps_libraries_loadable_and_refuses_a_broken_layout(tmp_path: Path):
    import _decimal  # a C extension of this Python: pyenv's carry their symbol tables

    slim = _load("slim")
    src = Path(_decimal.__file__)
    if not slim.has_symtab(src):
        pytest.skip(f"{src.name} is stripped already on this Python")
    bundle = tmp_path / "bundle"
    (bundle / "_internal").mkdir(parents=True)
    lib = bundle / "_internal" / src.name
    shutil.copyfile(src, lib)
    dyn = _dynamic_symbols(lib)
    n, saved, refused = slim.strip_all(bundle)
    assert (n, refused) == (1, []) and saved > 0
    assert not slim.has_symtab(lib) and slim.loadable(lib) and _dynamic_symbols(lib) == dyn
    subprocess.run([sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])", str(lib)], check=True)
    # a file whose PT_LOAD offset and address disagree modulo the alignment is what glibc refuses to map
    data = bytearray(lib.read_bytes())
    phoff = int.from_bytes(data[32:40], "little")
    for k in range(int.from_bytes(data[56:58], "little")):
        at = phoff + k * int.from_bytes(data[54:56], "little")
        if int.from_bytes(data[at:at + 4], "little") == 1 and int.from_bytes(data[at + 48:at + 56], "little") > 1:
            data[at + 8:at + 16] = (int.from_bytes(data[at + 8:at + 16], "little") + 8).to_bytes(8, "little")
            break
    broken = tmp_path / "broken.so"
    broken.write_bytes(bytes(data))
    assert not slim.loadable(broken)
    assert subprocess.run([sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])", str(broken)],
                          check=False, capture_output=True).returncode != 0


def test_host_libraries_are_only_desktop_basics():
    sl = _load("system_libs")
    for host in ("libstdc++.so.6", "libgcc_s.so.1", "libglib-2.0.so.0", "libgio-2.0.so.0", "libfontconfig.so.1",
                 "libfreetype.so.6", "libX11.so.6", "libz.so.1", "libpcre2-8.so.0",
                 # what PySide6's own wheels take from the host (QtDBus, QtNetwork, QtCore) and their own libraries
                 "libdbus-1.so.3", "libgssapi_krb5.so.2", "libzstd.so.1", "libsystemd.so.0", "libkrb5.so.3"):
        assert sl.from_host(host), host
    for bundled in ("libpython3.11.so.1.0", "libcrypto.so.3", "libssl.so.3", "libsqlite3.so.0", "liblzma.so.5",
                    "libxcb-cursor.so.0", "libxkbcommon.so.0", "libcap-ng.so.0", "libffi.so.8", "libbz2.so.1.0",
                    "PySide6/Qt/lib/libQt6Core.so.6", "numpy.libs/libgfortran-040039e1-0352e75f.so.5.0.0",
                    "libmd4c.so.0", "libzip.so.4"):
        assert not sl.from_host(bundled), bundled
