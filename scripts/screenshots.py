#!/usr/bin/env python3
"""Save PNGs of every screen of the window, at 1024×600 and 1280×720 (or --sizes) in both themes, for review and docs.

    python scripts/screenshots.py OUT_DIR [--real-model] [--fake] [--eval PATH] [--sizes 1024x600,1280x720]
                                          [--themes light,dark] [--only results,library] [--small]

Screens: empty, indexing, done (the summary with failed PDFs first, in plain words), results (with the prompt
context), preview-markdown (a rendered Markdown passage), pdf (a book passage without running heads, page numbers
or a split word), weak (a nonsense query), budget (a budget that fits nothing, with Raise budget), banners (three
notices, Ollama down among them, over results and the summary), copied (the status message after Copy context),
no-handler (Open with no application: the banner points to the open-with setting), quick (the popup, its footer
read from the packing), quick-budget (the popup when nothing fits), library (the folder tree), library-problems
(Problems only: folder Status in full), menu-file and menu-library (Quick search; Cancel indexing greyed while
idle), settings (every page, generated from the schema; settings-ollama: Test connection with no server;
settings-problem: values the settings file would refuse, shown at their fields), about. Files are named
``<screen>-<W>x<H>-<theme>.png``.
``--small`` re-encodes each PNG with a 256-colour palette (Pillow) so the set can live in docs/screenshots/.

Uses the real MemoryService with the fast HashEmbedder by default (``--real-model``: the bundled MiniLM, so
semantic results and weak-match calibration are real; ``--fake``: the in-memory test fake). Runs offscreen unless
``--onscreen`` (then on $DISPLAY). Config and data go to a temp folder: your own library is never touched.
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

OLLAMA_DOWN = ("Semantic search is off: Cannot reach Ollama at http://localhost:11434: is `ollama serve` running? "
               "([Errno 111] Connection refused; 3 attempts) Keyword search still works.")
SCREENS = ("empty", "indexing", "done", "results", "preview-markdown", "pdf", "weak", "budget", "banners", "copied",
           "no-handler", "quick", "quick-budget", "library", "library-problems",
           "menu-file", "menu-library", "settings", "about")


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", type=Path)
    p.add_argument("--real-model", action="store_true", help="use the bundled MiniLM instead of the hash embedder")
    p.add_argument("--fake", action="store_true", help="use the in-memory fake service (tests/gui/fake_service.py)")
    p.add_argument("--eval", type=Path, default=ROOT.parent / "shared" / "eval", help="shared eval data folder")
    p.add_argument("--onscreen", action="store_true", help="use the real display instead of offscreen")
    p.add_argument("--only", default="", help="comma-separated subset of: " + ", ".join(SCREENS))
    p.add_argument("--sizes", default="1024x600,1280x720")
    p.add_argument("--themes", default="light,dark")
    p.add_argument("--small", action="store_true", help="palette-compress the PNGs (needs Pillow)")
    return p.parse_args()


def compress(path: Path) -> None:
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(path) as im:
        q = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    q.save(path, optimize=True)


def main() -> int:
    args = parse()
    if not args.onscreen:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    tmp = Path(tempfile.mkdtemp(prefix="dm-shots-"))
    os.environ["DESKTOP_MEMORY_CONFIG_DIR"] = str(tmp / "config")
    os.environ["DESKTOP_MEMORY_DATA_DIR"] = str(tmp / "data")
    args.out.mkdir(parents=True, exist_ok=True)
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",") if s]
    themes = [t for t in args.themes.split(",") if t]

    from PySide6.QtWidgets import QApplication

    from desktop_memory.config import Settings
    from desktop_memory.gui.app import create_app
    from desktop_memory.gui.event_pump import pump_events
    from desktop_memory.gui.main_window import MainWindow

    app = create_app([sys.argv[0]])  # kept alive for the whole run
    assert app is not None

    def factory_for(file_delay: float = 0.0):
        if args.fake:
            sys.path.insert(0, str(ROOT / "tests" / "gui"))
            from fake_service import FakeService  # type: ignore[import-not-found]

            return lambda s: FakeService(s, file_delay=file_delay)
        from desktop_memory.service import MemoryService

        if args.real_model:
            return MemoryService
        from desktop_memory.embed.hashing import HashEmbedder

        return lambda s: MemoryService(s, embedder=HashEmbedder(64))

    shot = Shooter(args.out, compress if args.small else None)
    saved = shot.saved

    # a corpus: FastAPI docs in two folders (a tree in the Library) + PDFs incl. a broken one
    corpus = tmp / "corpus"
    (corpus / "fastapi" / "advanced").mkdir(parents=True)
    (corpus / "pdfs").mkdir()
    fastapi = args.eval / "mddocs" / "fastapi"
    for md in sorted(fastapi.glob("*.md"))[:30]:
        if md.name != "release-notes.md":  # 1,300 chunks of changelog: minutes of embedding for nothing shown
            shutil.copy(md, corpus / "fastapi" / md.name)
    for md in sorted((fastapi / "advanced").glob("*.md"))[:10]:
        shutil.copy(md, corpus / "fastapi" / "advanced" / md.name)
    for pdf in ("crazyones.pdf", "poppler-742-0-fuzzed.pdf", "PDFBOX-3148-2-fuzzed.pdf", "encrypted-file.pdf",
                "tracemonkey.pdf"):
        if (args.eval / "pdfs" / pdf).exists():
            shutil.copy(args.eval / "pdfs" / pdf, corpus / "pdfs" / pdf)
    if (args.eval / "pdfs" / "freeculture.pdf").exists():  # 20 pages of a book with running heads and page numbers
        import pypdfium2 as pdfium

        src, excerpt = pdfium.PdfDocument(str(args.eval / "pdfs" / "freeculture.pdf")), pdfium.PdfDocument.new()
        excerpt.import_pages(src, list(range(120, 140)))
        excerpt.save(str(corpus / "pdfs" / "freeculture-excerpt.pdf"))

    def new_window(factory, db: str, size: tuple[int, int]) -> MainWindow:
        s = Settings(db_path=str(tmp / "data" / db))
        w = MainWindow(s, service_factory=factory)
        w.resize(*size)
        w.show()
        wait(lambda: w.svc is not None and w.stats is not None, 60)
        wait(lambda: w.embedder_state != "loading", 120)
        return w

    def want(k: str) -> bool:
        return not only or k in only

    def set_query(w: MainWindow, q: str) -> None:
        w.search_bar.box.setText(q)
        w.search_bar.request_now()
        wait(lambda: w.results_model.query == q and w.context_panel.report is not None and not w.context.pending,
             60)

    indexed_db = "lib.db"
    first_summary = None
    for theme in themes:
        for size in sizes:
            w = new_window(factory_for(), f"empty-{theme}-{size[0]}.db", size)
            w.set_theme(theme)
            if want("empty"):
                shot(w, "empty", size, theme)
            if want("indexing"):
                w.add_paths([str(args.eval / "mddocs" / "hugo")])
                wait(lambda w=w: w.progress.bar.maximum() > 0 and w.progress.bar.value() > 50, 120)
                w.search_bar.box.setText("template")
                wait(lambda w=w: w.results_model.rowCount() > 0 or not w.is_indexing(), 30)
                shot(w, "indexing", size, theme)
                w.cancel_job()
                wait(lambda w=w: not w.is_indexing(), 60)
            w.close()

            w = new_window(factory_for(), indexed_db, size)
            w.set_theme(theme)
            needs_library = ("done", "results", "preview-markdown", "pdf", "weak", "budget", "banners", "copied",
                             "no-handler", "quick", "quick-budget", "library", "library-problems")
            if first_summary is None and any(want(k) for k in needs_library):
                w.add_paths([str(corpus)])
                wait(lambda w=w: not w.is_indexing() and w.last_summary is not None, 600)
                first_summary = w.last_summary
            wait(lambda w=w: w.library.model.document_count() > 0, 30)
            if want("done") and first_summary is not None:
                set_query(w, "environment variables settings")
                w.progress.finish(first_summary)  # the first run's summary (later windows reuse its database)
                shot(w, "done", size, theme)
            w.progress.hide()
            if want("results"):
                set_query(w, "environment variables settings")
                shot(w, "results", size, theme)
            if want("preview-markdown"):
                set_query(w, "async await concurrency")
                shot(w, "preview-markdown", size, theme)
            if want("pdf"):
                set_query(w, "it becomes more and more important in forming and reforming society")
                shot(w, "pdf", size, theme)
            if want("weak"):
                set_query(w, "zebra marmalade quasar")
                shot(w, "weak", size, theme)
            if want("budget"):
                set_query(w, "environment variables settings")
                budget = w.context_panel.budget.value()
                w.context_panel.budget.setValue(16)
                wait(lambda w=w: w.context_panel.raise_btn.isVisible() and not w.context.pending, 30)
                shot(w, "budget", size, theme)
                w.context_panel.budget.setValue(budget)
                wait(lambda w=w: not w.context.pending, 30)
            if want("banners"):
                set_query(w, "environment variables settings")
                if first_summary is not None:
                    w.progress.finish(first_summary)
                w.host.embedder_failed.emit(OLLAMA_DOWN)
                w.banners.show_message("The embedding model changed: re-embed the library to use it for semantic "
                                       "search.", "info", key="reembed", actions=[("Re-embed now", lambda: None)])
                w.banners.show_message("This library was made owner-only (it was readable by others).", "info",
                                       key="privacy")
                shot(w, "banners", size, theme)
                for key in ("embedder", "reembed", "privacy"):
                    w.banners.dismiss(key)
                w.progress.hide()
            if want("copied"):
                set_query(w, "environment variables settings")
                w.copy_context()
                shot(w, "copied", size, theme)
                w.status.clearMessage()
            if want("no-handler"):
                from desktop_memory.gui import desktop

                set_query(w, "environment variables settings")
                saved_open = desktop.open_at
                desktop.open_at = lambda *a, **k: ""  # type: ignore[assignment]  # a desktop with no handler
                w.actions_.open_row(0)
                desktop.open_at = saved_open  # type: ignore[assignment]
                shot(w, "no-handler", size, theme)
                w.banners.dismiss("open")
            if want("quick") or want("quick-budget"):  # the popup (gui/quick_popup.py) as the shell shows it
                from desktop_memory.gui.desktop_integration import install_shell

                shell = install_shell(app, w)
                popup = shell.show_quick()
                popup.box.setText("how do I use async and await")
                popup.run_search()
                wait(lambda p=popup: p.model.rowCount() > 0 and "in the block" in p.status.text(), 60)
                if want("quick"):
                    shot(popup, "quick", size, theme)
                if want("quick-budget"):
                    budget = popup.context.budget
                    popup.context.set_budget(16)
                    wait(lambda p=popup: p.raise_btn.isVisible(), 30)
                    shot(popup, "quick-budget", size, theme)
                    popup.context.set_budget(budget)
                popup.hide()
                shell.close()
            if want("library") or want("library-problems"):
                w.tabs.setCurrentIndex(1)
                w.library.tree.expandAll()
                w.library.fit_status_column()
                shot(w, "library", size, theme)
                w.library.problems_only.setChecked(True)  # the folders with failures, their Status in full
                wait(lambda w=w: any("failed" in r for r in w.library.row_texts()), 10)
                w.library.tree.expandAll()
                w.library.fit_status_column()
                shot(w, "library-problems", size, theme)
                w.library.problems_only.setChecked(False)
                w.tabs.setCurrentIndex(0)
            for name, title in (("menu-file", "&File"), ("menu-library", "L&ibrary")):
                if want(name):
                    menu = next(a.menu() for a in w.menuBar().actions() if a.text() == title)
                    menu.popup(w.mapToGlobal(w.menuBar().geometry().bottomLeft()))
                    shot(menu, name, size, theme)
                    menu.hide()
            if want("settings"):
                dlg = w.show_settings()
                dlg.resize(min(780, size[0] - 40), min(540, size[1] - 60))
                for page in dlg.pages:  # one page per settings section, generated from the schema
                    dlg.show_page(page.spec.key)
                    shot(dlg, f"settings-{page.spec.key or 'library'}", size, theme)
                dlg.editor("embedder.kind").set_value("ollama")  # an Ollama that is not there: the fix, once
                dlg.editor("embedder.ollama_url").set_value("http://127.0.0.1:9")
                dlg.show_page("embedder")
                assert dlg.ollama is not None
                dlg.ollama.test_connection()
                wait(lambda d=dlg: d.ollama.test_result.text().startswith(("✓", "✗")), 60)
                shot(dlg, "settings-ollama", size, theme)
                dlg.restore_defaults()
                for name, value in (("chunking.target_chars", 3000), ("chunking.max_chars", 1100),
                                    ("chunking.overlap_chars", 5000)):
                    dlg.editor(name).set_value(value)
                dlg.accept()  # refused: the problems are shown at their fields, the page is brought up
                shot(dlg, "settings-problem", size, theme)
                dlg.reject()
            if want("about"):
                dlg = w.show_about()
                spin(100)
                shot(dlg, "about", size, theme)
                dlg.close()
            w.close()
    pump_events()
    QApplication.processEvents()
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(saved)} screenshots, largest {max((p.stat().st_size for p in saved), default=0) // 1024} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
