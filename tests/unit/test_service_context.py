"""The service's context block: weak matches stay out unless asked, sources are named relative to the indexed
folder (absolute on request), highlights come from the real index."""

from __future__ import annotations

import dataclasses

from desktop_memory.config import Settings
from desktop_memory.models import LaneHit, Location, SearchResult
from desktop_memory.retrieve.highlight import MARK_END, MARK_START
from desktop_memory.service import MemoryService, strong_only


def test_weak_results_stay_out_of_the_context_unless_asked(tmp_path):
    def r(rank: int, strength: str) -> SearchResult:
        return SearchResult(rank, 0.1, rank, 1, f"/lib/docs/f{rank}.md", "markdown", f"text {rank}", Location(),
                            {"dense": LaneHit(rank, 0.2)}, strength=strength)

    results = [r(1, "strong"), r(2, "weak"), r(3, "weak")]
    assert [x.rank for x in strong_only(results)] == [1]
    assert [x.rank for x in strong_only(results, include_weak=True)] == [1, 2, 3]


def test_service_context_names_sources_relative_to_the_indexed_folder(tmp_path):
    from desktop_memory.embed.hashing import HashEmbedder

    folder = tmp_path / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "plan.md").write_text("# Plan\n\nThe launch plan names every milestone.\n", encoding="utf-8")
    svc = MemoryService(Settings(), db_path=tmp_path / "m.db", embedder=HashEmbedder(64))
    try:
        svc.index_paths([folder])
        rep = svc.context_outcome("launch milestone", backend="keyword")[0]
        assert rep.text.startswith("[Source: notes/sub/plan.md"), rep.text  # the default: no /home/<user>/…
        assert str(tmp_path) not in rep.text
        assert rep.items[0].source == str(folder / "sub" / "plan.md")  # the app keeps the absolute path
        svc.apply_settings(dataclasses.replace(svc.settings, context=dataclasses.replace(
            svc.settings.context, path_style="absolute")))
        report = svc.context_outcome("launch milestone", backend="keyword")[0]
        assert report.text.startswith(f"[Source: {folder}/sub/plan.md")
        svc.apply_settings(dataclasses.replace(svc.settings, context=dataclasses.replace(
            svc.settings.context, path_style="relative")))
        hit = svc.search_outcome("launch milestone", backend="keyword").results
        svc.remove_paths([folder])  # no root known (as while a folder is still being read) ...
        assert svc.build_context(hit, 500).text.startswith("[Source: plan.md")  # ... the file name, never more
        assert svc.build_context(hit, 500, extra_roots=[str(folder)]).text.startswith("[Source: notes/sub/plan.md")
        svc.index_paths([folder])
        rep = svc.context_outcome("launch milestone", backend="keyword")[0]
        marked = svc.highlights("launch milestones", [rep.items[0].chunk_id])
        assert MARK_START + "launch" + MARK_END in marked[rep.items[0].chunk_id]
    finally:
        svc.close()
