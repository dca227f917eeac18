"""Cold and warm start of the bundle's two entry points (docs/PACKAGING.md: before and after slimming).

    python packaging/startup_time.py dist/desktop-memory [other/desktop-memory ...] [--rounds 5]

With several bundles (before and after a change) the rounds interleave them, so a busy machine's load falls on
each alike.

For each round the bundle's files are first dropped from the page cache (``posix_fadvise(DONTNEED)`` on each file:
only this bundle's pages, nothing else on the machine), then:

* CLI: ``desktop-memory stats --db <small library>``: the bootloader, Python, the CLI and the store; exit.
* GUI: ``desktop-memory-gui --db <same library>`` offscreen, timed until the running app answers on its
  single-instance socket (the window is built and its event loop runs); then it is terminated.

"cold" is the first run after the eviction; "warm" runs the same command again at once. Medians over the rounds.
Everything runs in a temporary HOME, so no settings or library of the person running it are read or written.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENDPOINT = "import sys; from desktop_memory.gui.single_instance import endpoint; print(endpoint(sys.argv[1]))"


def ping(sock_path: str) -> bool:
    """The app's single-instance socket answers a ping (what a second `--quick` does, in-process here)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(1.0)
            s.connect(sock_path)
            s.sendall(b'{"cmd": "ping"}\n')
            return s.recv(16).strip() == b"ok"
    except OSError:
        return False


def evict(folder: Path) -> None:
    """Drop ``folder``'s files from the page cache, so the next start reads them from disk."""
    for p in folder.rglob("*"):
        if p.is_file() and not p.is_symlink():
            fd = os.open(p, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def cli_start(exe: Path, db: Path, env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run([str(exe), "--db", str(db), "stats"], env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def gui_start(exe: Path, db: Path, env: dict[str, str], timeout_s: float = 60.0) -> float:
    sock = subprocess.run([sys.executable, "-c", ENDPOINT, str(db)], env=env, check=True, capture_output=True,
                          text=True).stdout.strip()
    t = time.perf_counter()
    proc = subprocess.Popen([str(exe), "--db", str(db)], env={**env, "QT_QPA_PLATFORM": "offscreen"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while time.perf_counter() - t < timeout_s:
            if ping(sock):
                return time.perf_counter() - t
            if proc.poll() is not None:
                raise RuntimeError(f"{exe.name} exited with {proc.returncode} before it was ready")
            time.sleep(0.01)
        raise RuntimeError(f"{exe.name} not ready after {timeout_s:.0f} s")
    finally:
        proc.terminate()
        proc.wait(10)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundles", type=Path, nargs="+")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    bundles = [b.resolve() for b in args.bundles]
    kinds = ("cli cold", "cli warm", "gui cold", "gui warm")
    rows: dict[tuple[int, str], list[float]] = {(i, k): [] for i in range(len(bundles)) for k in kinds}
    loads = []
    with tempfile.TemporaryDirectory(prefix="dm-start-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        env = {"HOME": str(home), "TMPDIR": tmp, "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
        db = Path(tmp) / "lib.db"
        notes = Path(tmp) / "notes"
        notes.mkdir()
        (notes / "a.md").write_text("# Start\n\nA small library so the store opens a real database.\n")
        first = bundles[0]
        subprocess.run([str(first / first.name), "--db", str(db), "index", str(notes), "--no-embed", "-q"], env=env,
                       check=True, stdout=subprocess.DEVNULL)
        for _ in range(args.rounds):
            for i, bundle in enumerate(bundles):
                # dist/<name>/<name> and dist/<name>/<name>-gui
                cli, gui = bundle / bundle.name, bundle / f"{bundle.name}-gui"
                loads.append(os.getloadavg()[0])
                evict(bundle)
                rows[(i, "cli cold")].append(cli_start(cli, db, env))
                rows[(i, "cli warm")].append(cli_start(cli, db, env))
                evict(bundle)
                rows[(i, "gui cold")].append(gui_start(gui, db, env))
                rows[(i, "gui warm")].append(gui_start(gui, db, env))
    print(f"{args.rounds} rounds; load average (1 min) {min(loads):.1f}-{max(loads):.1f}; median ms (min-max)")
    print("| start | " + " | ".join(str(b) for b in bundles) + " |")
    print("|---|" + "---:|" * len(bundles))
    for k in kinds:
        cells = [rows[(i, k)] for i in range(len(bundles))]
        print(f"| {k} | " + " | ".join(f"{statistics.median(v) * 1000:.0f} ({min(v) * 1000:.0f}-{max(v) * 1000:.0f})"
                                       for v in cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
