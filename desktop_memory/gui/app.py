"""Entry point: ``desktop-memory-gui`` / ``python -m desktop_memory``.

Start-up is kept fast on purpose: only Qt and the GUI modules load here; the database opens and the embedding
model loads on worker threads after the window is shown.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import logging
import os
import sys
import traceback
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from .. import APP_NAME, __version__
from ..app_dirs import GUI_LOG, log_dir
from ..config import Settings, settings_path
from ..errors import SettingsError
from ..library_location import ENV_DB, is_server_url, split_password
from ..paths import normalise
from ..private_files import PrivateRotatingFileHandler, make_private_dirs
from ..settings_file import load_settings
from .platform_libs import check_platform_libs

if TYPE_CHECKING:
    from PySide6.QtWidgets import QApplication

    from .desktop_integration import DesktopShell
    from .main_window import MainWindow

log = logging.getLogger("desktop_memory.gui")


def _setup_logging() -> Path | None:
    """Log to <data dir>/logs/gui.log (rotating); errors that are bugs land there with tracebacks."""
    try:
        logs = log_dir()
        make_private_dirs(logs)
        path = logs / GUI_LOG
        handler: logging.Handler = PrivateRotatingFileHandler(path, maxBytes=1_000_000, backupCount=2,  # 0600
                                                              encoding="utf-8")
    except OSError:
        path, handler = None, logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("desktop_memory")
    if not any(isinstance(h, type(handler)) for h in root.handlers):
        root.addHandler(handler)
    root.setLevel(logging.INFO)
    return path


def create_app(argv: list[str] | None = None) -> QApplication:
    from PySide6.QtWidgets import QApplication  # not at import: `--quick` hands off to a running app without Qt

    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication(argv if argv is not None else sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setApplicationDisplayName("Desktop Memory")
    app.setApplicationVersion(__version__)
    app.setOrganizationName(APP_NAME)
    app.setDesktopFileName(APP_NAME)
    return app


def _install_excepthook(window: MainWindow) -> None:
    """An unexpected exception in a slot becomes a log entry and a banner, never a crash or a modal dialog."""

    def hook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        log.error("unhandled exception:\n%s", "".join(traceback.format_exception(exc_type, exc, tb)))
        try:
            window.banners.show_message(
                f"Something went wrong ({exc_type.__name__}: {exc}). The app keeps running; details are in the log.",
                "error", key="bug",
            )
        except Exception:
            pass

    sys.excepthook = hook


def present(window: MainWindow, shell: DesktopShell, *, quick: bool) -> None:
    """Show what the start asked for. A cold ``--quick`` shows the popup, with or without a tray: the window stays
    in the tray, or (no tray) starts minimized, so it never takes the focus that the popup hides without; the
    popup is summoned once the window is placed, on the next turn of the event loop."""
    from PySide6.QtCore import QTimer

    if not quick:
        window.show()
        return
    if shell.tray is None:
        window.showMinimized()
    QTimer.singleShot(0, shell.show_quick)


def with_db_argument(settings: Settings, db: str) -> Settings:
    """The settings with the library ``--db`` names. It wins over DESKTOP_MEMORY_DB, as in the CLI (the settings
    rank after the environment). A shared library's password may be in the URL (docs/SHARED.md, section 3): it goes
    to this process's PGPASSWORD, never into the settings, where the Settings dialog would show it and the settings
    file would refuse it (the window could not open the library at all)."""
    os.environ.pop(ENV_DB, None)
    if is_server_url(db):
        url, password = split_password(db.strip())
        if password is not None:
            os.environ["PGPASSWORD"] = password
        return dataclasses.replace(settings, db_url=url)
    return dataclasses.replace(settings, db_path=str(Path(db).expanduser().resolve()))


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="desktop-memory-gui",
                                description="Desktop Memory: your files as searchable memory.")
    p.add_argument("paths", nargs="*", help="files or folders to index right away")
    p.add_argument("--db", help="database file to open (default: from settings)")
    p.add_argument("--theme", choices=("system", "light", "dark"), help="appearance for this run")
    p.add_argument("--quick", action="store_true",
                   help="show the quick-search popup (in the running app when there is one, see docs/GUI.md)")
    p.add_argument("--smoke", action="store_true",
                   help="self-check (store, sqlite-vec, model, window, search), then exit")
    p.add_argument("--stall-bench", metavar="FOLDER",
                   help="benchmark: index FOLDER in a temporary library and print the longest UI stalls "
                        "(options: desktop-memory-gui --stall-bench --help; needs a source checkout)")
    p.add_argument("--soak-bench", action="store_true",
                   help="benchmark: thousands of mixed operations on the real window; prints descriptors, threads "
                        "and memory (options: desktop-memory-gui --soak-bench --help; needs a source checkout)")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return p.parse_args(argv)


def _run_benchmark(flag: str, argv: list[str]) -> int:
    """The GUI benchmarks live in the harness (never in the bundle), found by entry point; say how to get them."""
    from ..harness import GUI_BENCH_MISSING, GUI_BENCHMARKS, find

    bench_main = find(GUI_BENCHMARKS, flag.lstrip("-"))
    if bench_main is None:
        print(GUI_BENCH_MISSING.format(flag=flag), file=sys.stderr)
        return 2
    code: int = bench_main(argv)
    return code


def main(argv: list[str] | None = None) -> int:
    import multiprocessing

    multiprocessing.freeze_support()  # a frozen build's PDF helper process re-enters here
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["--stall-bench"], ["--soak-bench"]):  # benchmarks with their own options
        return _run_benchmark(argv[0], argv[1:])
    args = parse_args(argv)
    if args.stall_bench:  # `--stall-bench=FOLDER`
        return _run_benchmark("--stall-bench", [args.stall_bench])
    if args.smoke:
        from .smoke import run_gui_smoke

        return run_gui_smoke()
    try:
        loaded: Settings | None = load_settings()
    except SettingsError:
        loaded = None
    app = None
    if loaded is None:  # a broken settings file: say so, offer to open or reset it (it is never overwritten)
        missing = check_platform_libs()  # before Qt: its abort would name the wrong library
        if missing is not None:
            return missing
        _setup_logging()
        app = create_app()
        from .settings_problem import load_settings_or_ask

        loaded = load_settings_or_ask()
        if loaded is None:
            return 1
    settings = loaded
    if args.db:
        settings = with_db_argument(settings, args.db)
    from .single_instance import hand_off  # no Qt: a running app gets the request in milliseconds

    paths = [normalise(p) for p in args.paths]  # links kept: the app checks them (paths_guard), not us
    if hand_off(settings.resolved_db_path(), {"cmd": "quick"} if args.quick else {"cmd": "show", "paths": paths}):
        return 0
    if app is None:
        missing = check_platform_libs()  # before Qt: its abort would name the wrong library
        if missing is not None:
            return missing
        _setup_logging()
        app = create_app()
    from PySide6.QtCore import QTimer

    from .desktop_integration import install_shell
    from .main_window import MainWindow
    from .style import app_icon, apply_theme

    theme = args.theme or settings.appearance.theme
    apply_theme(app, theme)
    app.setWindowIcon(app_icon())
    window = MainWindow(settings, settings_path=settings_path())
    window.theme = theme
    _install_excepthook(window)
    shell = install_shell(app, window)
    present(window, shell, quick=args.quick)
    # Objects alive now (Qt wrappers, modules) never die: keep them out of the cyclic GC so a full collection
    # triggered by a worker cannot pause the UI thread for long.
    gc.freeze()
    if paths:
        QTimer.singleShot(0, lambda: window.add_paths(paths))
    code: int = app.exec()
    return code


if __name__ == "__main__":
    sys.exit(main())
