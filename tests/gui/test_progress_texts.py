"""Issue 33 "The window" 10: the progress texts while embedding, after a removal, after Cancel: the real window,
service and store, with an embedder that takes real time per slice (tests/support/paced.py)."""

from __future__ import annotations

import shutil

from desktop_memory.jobs import EMBED
from desktop_memory.models import IndexProgress
from tests.support.paced import write_folder

from .conftest import PDFS
from .helpers import drop, problem_texts, wait_job


def test_embedding_names_what_it_embeds_and_a_removal_is_not_re_embedded(make_window, paced_factory, qtbot,
                                                                         tmp_path):
    office = write_folder(tmp_path / "office", files=40, word="quokka")
    w = make_window(paced_factory)
    drop(w, [office])  # read, then the vectors: the read is quick, the embedding takes a while
    qtbot.waitUntil(lambda: w.index_jobs.current is not None and w.index_jobs.current.kind == EMBED, timeout=30000)
    qtbot.waitUntil(lambda: w.svc.stats().vectors > 0, timeout=20000)
    qtbot.wait(1500)  # a few embedding slices report their progress
    line = w.progress.current.text()
    assert ".md" not in line and "Embedding" in line, line  # not the last file read, minutes ago
    # the two lanes at once (a big drop): the read lane's last file, then minutes of the embedding lane's slices
    jobs = w.index_jobs
    jobs.progress.emit(IndexProgress(phase="extract", files_total=40, files_done=40, current=str(office / "z.md")))
    jobs.progress.emit(IndexProgress(phase="embed", chunks_to_embed=464, chunks_embedded=48))
    line = w.progress.current.text()
    assert "z.md" not in line and "48 of 464" in line, line
    w.cancel_job()
    wait_job(qtbot, w)
    w.reembed_library()  # Library ▸ Embed missing vectors
    qtbot.waitUntil(lambda: w.index_jobs.current is not None and w.index_jobs.current.kind == EMBED
                    and not w.index_jobs.current.auto, timeout=20000)
    w.remove_paths([str(office)])  # the folder being embedded
    wait_job(qtbot, w)
    title = w.progress.title.text()
    assert "Re-embedded" not in title and "office" in title and "removed" in title, title


def test_the_cancel_summary_leaves_out_a_folder_removed_meanwhile(make_window, paced_factory, qtbot, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    for i in range(3):
        shutil.copy(PDFS / "poppler-742-0-fuzzed.pdf", bad / f"fuzzed-{i}.pdf")
    (bad / "ok.md").write_text("# Ok\n\nA readable note.\n", encoding="utf-8")
    big = write_folder(tmp_path / "big", files=60)
    w = make_window(paced_factory)
    drop(w, [bad, big])
    qtbot.waitUntil(lambda: any(str(bad) in p for p in w.index_jobs.outcomes), timeout=30000)
    qtbot.waitUntil(lambda: sum(1 for p in w.index_jobs.outcomes if p.startswith(str(bad))) >= 4, timeout=30000)
    assert w.is_busy()
    w.remove_paths([str(bad)])
    qtbot.waitUntil(lambda: not any(d.path.startswith(str(bad)) for d in w.svc.documents()), timeout=10000)
    w.cancel_job()
    wait_job(qtbot, w)
    texts = problem_texts(w.progress)
    assert not any("fuzzed" in t for t in texts), texts
    assert " failed" not in w.progress.current.text() or "0 failed" in w.progress.current.text()


def test_a_long_detail_line_wraps_instead_of_widening_the_window(qtbot):
    """A reason of 300 characters in the panel's detail line once made the window wider than a 1280 screen."""
    from desktop_memory.gui.progress_panel import ProgressPanel

    panel = ProgressPanel()
    qtbot.addWidget(panel)
    panel.detail.setText("This index holds vectors from all-MiniLM-L6-v2 but the configured model is another one; "
                         * 4)
    panel.detail.show()
    assert panel.minimumSizeHint().width() < 800
