#!/usr/bin/env python3
"""Save PNGs of each main GUI state into a folder, for review and docs.

    python scripts/screenshots.py OUT_DIR [--real-model] [--fake] [--eval PATH]

States: 01-empty, 02-indexing, 03-results-context, 04-library-failed, 05-settings, 06-dark, 07-scale-200
(07 runs in a child process with QT_SCALE_FACTOR=2, because the scale factor is read at QApplication start).

Uses the real MemoryService with the fast HashEmbedder by default (``--real-model`` for the bundled MiniLM,
``--fake`` for the in-memory test fake when the core is not importable). Runs offscreen unless DISPLAY is set
and ``--onscreen`` is given. Config and data go to a temp folder: your own library is never touched.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", type=Path)
    p.add_argument("--real-model", action="store_true", help="use the bundled MiniLM instead of the hash embedder")
    p.add_argument("--fake", action="store_true", help="use the in-memory fake service (tests/gui/fake_service.py)")
    p.add_argument("--eval", type=Path, default=ROOT.parent / "shared" / "eval", help="shared eval data folder")
    p.add_argument("--onscreen", action="store_true", help="use the real display instead of offscreen")
    p.add_argument("--only", default="", help="comma-separated subset, e.g. 07 (used for the child process)")
    p.add_argument("--theme", default="light")
    return p.parse_args()


def main() -> int:
    args = parse()
    if not args.onscreen:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    tmp = Path(tempfile.mkdtemp(prefix="dm-shots-"))
    os.environ["DESKTOP_MEMORY_CONFIG_DIR"] = str(tmp / "config")
    os.environ["DESKTOP_MEMORY_DATA_DIR"] = str(tmp / "data")
    args.out.mkdir(parents=True, exist_ok=True)
    only = {s.strip() for s in args.only.split(",") if s.strip()}

    from PySide6.QtCore import QEventLoop, QTimer

    from desktop_memory.config import Settings
    from desktop_memory.gui.app import create_app
    from desktop_memory.gui.event_pump import pump_events
    from desktop_memory.gui.main_window import MainWindow
    from desktop_memory.gui.style import apply_theme

    app = create_app([sys.argv[0]])
    apply_theme(app, args.theme)

    def spin(ms: int) -> None:
        loop = QEventLoop()
        QTimer.singleShot(ms, loop.quit)
        loop.exec()

    def wait(cond, timeout_s: float = 120.0) -> bool:
        end = time.time() + timeout_s
        while time.time() < end:
            if cond():
                return True
            spin(30)
        print("  (timed out waiting)", file=sys.stderr)
        return False

    def factory_for(file_delay: float = 0.0):
        if args.fake:
            sys.path.insert(0, str(ROOT / "tests" / "gui"))
            from fake_service import FakeService  # type: ignore[import-not-found]

            return lambda s: FakeService(s, file_delay=file_delay)
        from desktop_memory.service import MemoryService

        if args.real_model:
            return lambda s: MemoryService(s)
        from desktop_memory.embed.hashing import HashEmbedder

        return lambda s: MemoryService(s, embedder=HashEmbedder(64))

    def shot(widget, name: str) -> None:
        spin(150)
        path = args.out / f"{name}.png"
        widget.grab().save(str(path))
        print(f"saved {path}")

    # a corpus: some FastAPI docs + PDFs incl. a broken one
    corpus = tmp / "corpus"
    (corpus / "fastapi").mkdir(parents=True)
    (corpus / "pdfs").mkdir()
    fastapi = args.eval / "mddocs" / "fastapi"
    for md in sorted(fastapi.rglob("*.md"))[:40]:
        shutil.copy(md, corpus / "fastapi" / md.name)
    for pdf in ("crazyones.pdf", "poppler-742-0-fuzzed.pdf", "encrypted-file.pdf", "tracemonkey.pdf"):
        shutil.copy(args.eval / "pdfs" / pdf, corpus / "pdfs" / pdf)

    def new_window(factory, db: str) -> MainWindow:
        s = Settings()
        s.db_path = str(tmp / "data" / db)
        w = MainWindow(s, service_factory=factory)
        w.resize(1280, 800)
        w.show()
        wait(lambda: w.svc is not None and w.stats is not None, 60)
        return w

    want = (lambda k: not only or k in only)

    if want("01") or want("02"):
        w = new_window(factory_for(file_delay=0.05 if args.fake else 0.0), "a.db")
        if want("01"):
            shot(w, "01-empty")
        if want("02"):
            big = args.eval / "mddocs" / "hugo"
            w.add_paths([str(big)])
            wait(lambda: w.progress.bar.maximum() > 0 and w.progress.bar.value() > 30, 120)
            w.search_bar.box.setText("template")
            wait(lambda: w.results_model.rowCount() > 0 or not w.is_indexing(), 30)
            shot(w, "02-indexing")
            w.cancel_job()
            wait(lambda: not w.is_indexing(), 60)
        w.close()

    if any(want(k) for k in ("03", "04", "05", "06")):
        w = new_window(factory_for(), "b.db")
        w.add_paths([str(corpus)])
        wait(lambda: not w.is_indexing() and w.last_summary is not None, 300)
        wait(lambda: w.library.model.document_count() > 0, 30)
        if want("03"):
            w.progress.hide()
            w.search_bar.box.setText("environment variables settings")
            wait(lambda: w.results_model.rowCount() > 0 and w.context_panel.report is not None, 30)
            shot(w, "03-results-context")
        if want("04"):
            w.progress.finish(w.last_summary)
            w.tabs.setCurrentIndex(1)
            w.library.filter_box.setText("pdf")
            shot(w, "04-library-failed")
            w.library.filter_box.clear()
            w.tabs.setCurrentIndex(0)
            w.progress.hide()
        if want("05"):
            dlg = w.show_settings()
            dlg.resize(620, 560)
            spin(200)
            shot(dlg, "05-settings")
            dlg.reject()
        if want("06"):
            w.set_theme("dark")
            w.search_bar.box.setText("async await")
            wait(lambda: w.results_model.query == "async await" and w.context_panel.report is not None, 30)
            shot(w, "06-dark")
            w.set_theme(args.theme)
        w.close()

    if want("07"):
        if os.environ.get("QT_SCALE_FACTOR") == "2":
            w = new_window(factory_for(), "c.db")
            w.resize(1280, 800)
            w.add_paths([str(corpus / "fastapi")])
            wait(lambda: not w.is_indexing() and w.last_summary is not None, 300)
            w.progress.hide()
            w.search_bar.box.setText("dependency injection")
            wait(lambda: w.results_model.rowCount() > 0 and w.context_panel.report is not None, 30)
            shot(w, "07-scale-200")
            w.close()
        else:
            env = dict(os.environ, QT_SCALE_FACTOR="2")
            cmd = [sys.executable, __file__, str(args.out), "--only", "07", "--eval", str(args.eval)]
            cmd += ["--fake"] if args.fake else []
            cmd += ["--real-model"] if args.real_model else []
            subprocess.run(cmd, env=env, check=False)
    pump_events()
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
