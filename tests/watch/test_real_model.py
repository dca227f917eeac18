"""With the real local model (all-MiniLM-L6-v2 int8): a watched file becomes semantically searchable once its
vectors are embedded, with no word in common between the query and the text."""

from __future__ import annotations

import pytest

from desktop_memory.config import Settings, WatchSettings
from desktop_memory.service import MemoryService

from .conftest import make_tree, wait_for

pytestmark = pytest.mark.slow


def test_a_new_file_is_found_by_meaning_after_embedding(tmp_path, start_watcher):
    root = make_tree(tmp_path / "notes", {
        "tax.md": "# Taxes\n\nThe annual return is filed in April with the revenue office.\n",
        "garden.md": "# Garden\n\nTomatoes need full sun and regular watering in summer.\n",
    })
    svc = MemoryService(Settings(watch=WatchSettings(quiet_ms=100)), db_path=tmp_path / "m.db")
    try:
        svc.index_paths([root])
        _, rec = start_watcher(svc)
        (root / "pets.md").write_text("# Pets\n\nOur kitten naps on the windowsill every afternoon.\n")
        wait_for(lambda: rec.of("embedded"), timeout=120, what="the new file's vectors")
        assert svc.stats().pending_vectors == 0
        top = svc.search_outcome("a young cat sleeping by the window", backend="dense", top_k=1).results
        assert [r.source for r in top] == [str(root / "pets.md")]
    finally:
        svc.close()
