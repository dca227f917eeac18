"""A private PostgreSQL 16 + pgvector for ci_bundle_check.sh (the ``pgserver`` package of the checkout's .venv).

    python packaging/pg_server.py FOLDER URL_FILE

Starts a throw-away server in FOLDER (as root, pgserver runs it as its own unprivileged user, so FOLDER must be one
that user can reach), writes its URL to URL_FILE, and keeps it running until this process gets SIGTERM or SIGINT;
then stops it. Any failure to start exits non-zero with the reason: the bundle check fails, it never skips.
"""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path


def main(folder: str, url_file: str) -> int:
    import pgserver  # the checkout's .venv has it (the test extras); the bundle does not need it

    started = time.monotonic()
    server = pgserver.get_server(folder, cleanup_mode="stop")
    try:
        url = str(server.get_uri())
        tmp = Path(url_file + ".tmp")
        tmp.write_text(url, encoding="utf-8")
        tmp.rename(url_file)  # the shell waits for the file: it appears whole
        print(f"pgserver: PostgreSQL up in {time.monotonic() - started:.1f} s", flush=True)
        stop = False

        def _stop(*_: object) -> None:
            nonlocal stop
            stop = True

        signal.signal(signal.SIGTERM, _stop)
        signal.signal(signal.SIGINT, _stop)
        while not stop:
            time.sleep(0.1)
    finally:
        server.cleanup()
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
