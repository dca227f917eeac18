"""The window benchmark's summary: the window's own time above its service call, and the searcher's split per part
in the window, in its process and in a fresh process (what tells a slow window from a slow service)."""

from __future__ import annotations

from desktop_memory_bench.window_search import format_table, summarise


def _search(total: float, first_paint: float, service: float, dense: float) -> dict:
    return {"query": "q", "ms": total, "shown_ms": first_paint - 2, "first_paint_ms": first_paint, "painted": True,
            "results": 10, "calls": [{"name": "search_outcome", "start_ms": 2.0, "ms": service},
                                     {"name": "build_context", "start_ms": service + 5, "ms": 1.0}],
            "ui_ms": {"show_response": 4.0, "preview": 1.0},
            "parts": [{"embed": 10.0, "fts": 30.0, "dense": dense, "fuse": 2.0, "fetch": 5.0, "total": service - 1}]}


def test_the_summary_splits_the_window_s_own_time_from_the_service_call_and_prints_it():
    window = {
        "searches": [_search(900, 850, 800, 700), _search(100, 80, 70, 40), _search(120, 90, 80, 50),
                     _search(110, 85, 75, 45)],
        "direct_ms": [60.0, 61.0, 62.0], "paused_ms": [70.0, 71.0],
        "direct_parts": [{"dense": 30.0, "total": 59.0}] * 3, "paused_parts": [{"dense": 35.0, "total": 69.0}] * 2,
        "warm_ups_done_s": [[True, 3.0]], "shown_s": 0.5, "first_search_after_shown_s": 5.0,
    }
    service = {"walls_ms": [50.0, 52.0, 54.0], "cold_first_ms": 900.0, "chunks": 1000,
               "parts": [{"embed": 9.0, "fts": 20.0, "dense": 25.0, "total": 53.0}] * 3}
    out = summarise(window, service)
    assert out["window_warm_p50_ms"] == 110.0  # the first search is not a warm one
    assert out["window_warm_first_paint_p50_ms"] == 85.0
    assert out["window_overhead_p50_ms"] == 35.0  # 110 - 75: the window's time above its own service call
    assert out["ui_show_response_p50_ms"] == 4.0
    assert out["parts_p50"]["window"]["dense"] == 45.0
    assert out["parts_p50"]["in_window"]["dense"] == 30.0 and out["parts_p50"]["fresh_process"]["fts"] == 20.0
    assert out["ratio_p50"] == 110.0 / 52.0
    text = format_table(out, 4)
    assert "first paint event" in text and "own time above its search_outcome call, p50: 35.0 ms" in text
    assert "fresh_process" in text and "2.12×" in text
