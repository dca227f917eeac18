"""Content hashes: cheap change detection for incremental indexing (blake2b-128, hex)."""

from __future__ import annotations

import hashlib
import os
import stat

from ..errors import ExtractionError
from ..models import STATUS_SKIPPED
from .detect import READ_FLAGS

_CHUNK = 1 << 20


def hash_file(path: str | os.PathLike[str]) -> str:
    """Streaming blake2b (16-byte digest) of the raw file bytes; memory use does not grow with file size.

    Opened non-blocking and checked with fstat, so a file swapped for a FIFO since the walk cannot hang us
    (raises ExtractionError "not a regular file ..."); other problems raise OSError as usual.
    """
    fd = os.open(path, READ_FLAGS)
    with os.fdopen(fd, "rb", buffering=0) as fh:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            from .walk import special_file_kind

            kind = "folder" if stat.S_ISDIR(mode) else special_file_kind(mode)
            raise ExtractionError(f"not a regular file ({kind})", status=STATUS_SKIPPED)
        h = hashlib.blake2b(digest_size=16)
        while block := fh.read(_CHUNK):
            h.update(block)
    return h.hexdigest()

