"""Where a library lives, as the store sees it: the text rules of library_location.py (``is_server_url``: a
``postgresql://`` URL or a file; ``redacted``: the URL every message shows, without its password), one set of rules
for the front ends, the service and the stores."""

from __future__ import annotations

from ..library_location import is_server_url, redacted

__all__ = ["is_server_url", "redacted"]
