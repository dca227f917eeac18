#!/usr/bin/env python3
"""PNGs of the window on a shared PostgreSQL library with two machines' folders (docs/SHARED.md, issue 32).

    python scripts/screenshots_shared.py OUT_DIR [--real-model] [--eval PATH] [--sizes 1280x720]
                                                 [--themes light,dark] [--small] [--onscreen]

A private PostgreSQL with pgvector (the ``pgserver`` package, as in the tests) in a temp folder; the machine
"desktop" (its own config folder, so its own machine id) indexes its notes and part of the Hugo docs, then this
window, the machine "laptop", indexes FastAPI docs of its own. Screens: ``shared-results`` (a search answered
from both machines, the desktop's rows named "desktop: plan.md"), ``shared-open`` (Open on the desktop's file:
the banner says why not), ``shared-library`` (this machine's folder first, then the desktop's, named) and
``shared-settings`` (Settings ▸ Library with the shared library's URL). Files: ``<screen>-<W>x<H>-<theme>.png``.
Config, data and the server go to a temp folder, removed at the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from qt_driving import Shooter, spin, wait  # the sibling module (scripts/ is this script's sys.path[0])

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

NOTES = {
    "plan.md": "# Plan for the spring release\n\nDeploy the API behind the proxy in April. Settings come from "
               "environment variables, never from a file in the repository. Ask Ana about the staging database "
               "and its backups before the freeze.\n\n## Open questions\n\n- Which settings need a restart?\n"
               "- Do the workers read the same environment variables as the web process?\n",
    "meeting-2026-11-20.md": "# Team meeting, 20 November\n\nWe agreed to keep one shared memory of the design "
                             "notes. Deployment checklist: environment variables documented, health checks, "
                             "rollback plan. Next meeting on the 4th.\n",
    "reading-list.md": "# Reading list\n\n- Designing Data-Intensive Applications, chapter 5 (replication)\n"
                       "- The PostgreSQL documentation on MVCC and VACUUM\n- Hugo's content organisation docs\n",
}
QUERY = "deploy settings environment variables"


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", type=Path)
    p.add_argument("--real-model", action="store_true", help="use the bundled MiniLM instead of the hash embedder")
    p.add_argument("--eval", type=Path, default=ROOT.parent / "shared" / "eval", help="shared eval data folder")
    p.add_argument("--onscreen", action="store_true", help="use the real display instead of offscreen")
    p.add_argument("--sizes", default="1280x720")
    p.add_argument("--themes", default="light,dark")
    p.add_argument("--small", action="store_true", help="palette-compress the PNGs (needs Pillow)")
    return p.parse_args()


def corpus(tmp: Path, eval_dir: Path) -> tuple[Path, Path, Path]:
    """The desktop's two folders (its notes, Hugo docs) and the laptop's (FastAPI docs), as real files."""
    home = tmp / "ana"  # a short path, so the Library's folder rows show their own names
    notes, site, api = home / "notes", home / "site-docs", home / "work" / "fastapi-docs"
    notes.mkdir(parents=True)
    for name, text in NOTES.items():
        (notes / name).write_text(text, encoding="utf-8")
    site.mkdir(parents=True)
    for md in sorted((eval_dir / "mddocs" / "hugo").rglob("*.md"))[:25]:
        shutil.copy(md, site / f"{md.parent.name}-{md.name}")
    api.mkdir(parents=True)
    for md in sorted((eval_dir / "mddocs" / "fastapi").glob("*.md"))[:30]:
        if md.name != "release-notes.md":
            shutil.copy(md, api / md.name)
    return notes, site, api


def main() -> int:
    args = parse()
    if not args.onscreen:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    tmp = Path(tempfile.mkdtemp(prefix="dm-"))
    os.environ["DESKTOP_MEMORY_DATA_DIR"] = str(tmp / "data")
    args.out.mkdir(parents=True, exist_ok=True)
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",") if s]
    themes = [t for t in args.themes.split(",") if t]

    import pgserver
    import psycopg

    pg_dir = tempfile.mkdtemp(prefix="dm-shared-shots-pg-")  # (as root, pgserver's own user must reach it)
    server = pgserver.get_server(pg_dir, cleanup_mode="stop")
    base = str(server.get_uri())
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute("create database memory")
    url = base.replace("/postgres?", "/memory?").replace("postgres:@", "postgres@")  # no password in settings
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("create extension if not exists vector")

    from desktop_memory.config import Settings
    from desktop_memory.embed.hashing import HashEmbedder
    from desktop_memory.service import MemoryService

    def make(settings: Settings) -> MemoryService:
        return MemoryService(settings) if args.real_model else MemoryService(settings, embedder=HashEmbedder(64))

    notes, site, api = corpus(tmp, args.eval)
    os.environ["DESKTOP_MEMORY_CONFIG_DIR"] = str(tmp / "config-desktop")  # the other machine
    desktop = make(Settings(db_url=url, machine_name="desktop"))
    desktop.index_paths([notes, site])
    desktop.close()
    os.environ["DESKTOP_MEMORY_CONFIG_DIR"] = str(tmp / "config-laptop")  # this window's machine


    from desktop_memory.gui.app import create_app
    from desktop_memory.gui.main_window import MainWindow
    from desktop_memory.gui.style import apply_theme

    app = create_app([sys.argv[0]])
    assert app is not None

    from screenshots import compress  # type: ignore[import-not-found]  # the sibling script's

    shot = Shooter(args.out, compress if args.small else None, settle_ms=300)
    saved = shot.saved

    indexed = False
    for theme in themes:
        apply_theme(app, theme)
        for size in sizes:
            w = MainWindow(Settings(db_url=url, machine_name="laptop"), service_factory=make)
            w.resize(*size)
            w.show()
            w.set_theme(theme)
            wait(lambda w=w: w.svc is not None and w.stats is not None, 60)
            wait(lambda w=w: w.embedder_state != "loading", 120)
            if not indexed:
                w.add_paths([str(api)])
                wait(lambda w=w: not w.is_indexing() and w.last_summary is not None, 600)
                indexed = True
            w.progress.hide()
            w.search_bar.box.setText(QUERY)
            w.search_bar.request_now()
            wait(lambda w=w: w.results_model.query == QUERY and w.context_panel.report is not None
                 and not w.context.pending, 60)
            results = w.results_model.results()
            theirs = next((i for i, r in enumerate(results) if r.remote and r.source.endswith("plan.md")), None)
            if theirs is None:
                theirs = next((i for i, r in enumerate(results) if r.remote), 0)
            w.results_view.setCurrentIndex(w.results_model.index(theirs))
            shot(w, "shared-results", size, theme)
            w.actions_.open_row(theirs)  # the desktop's file: the banner says why it does not open here
            shot(w, "shared-open", size, theme)
            w.banners.dismiss("open")
            w.tabs.setCurrentIndex(1)
            wait(lambda w=w: w.library.model.rowCount() >= 3, 30)
            w.library.tree.expandAll()
            w.library.fit_status_column()
            shot(w, "shared-library", size, theme)
            w.tabs.setCurrentIndex(0)
            dlg = w.show_settings()
            dlg.resize(min(780, size[0] - 40), min(540, size[1] - 60))
            dlg.show_page("")
            shot(dlg, "shared-settings", size, theme)
            dlg.reject()
            w.close()
    spin(500)
    server.cleanup()
    shutil.rmtree(pg_dir, ignore_errors=True)
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(saved)} screenshots")
    return 0


if __name__ == "__main__":
    sys.exit(main())
