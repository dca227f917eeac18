"""Searching ahead (gui/search_controller.py): the text is searched in the pauses of typing, unseen, and the Enter
that follows for the same text takes that answer over instead of searching again; a burst of keys searches
nothing ahead, a changed text or filter is searched anew, a reranker is never asked ahead, and an answer searched
ahead is never shown on its own. Real TaskRunner and controller; the service is the GUI tests' fake (its calls
are what is asserted)."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import Qt

from desktop_memory.config import Settings
from desktop_memory.gui.search_controller import AHEAD_PAUSE_MS, SearchController, SearchRequest
from desktop_memory.models import SearchFilters

from .fake_service import FakeService


@pytest.fixture
def fake(docs_dir):
    svc = FakeService(Settings(), slow_queries={"async slow": 0.6})
    svc.index_paths([docs_dir])
    svc.search_calls.clear()
    return svc


def _typed(ctl: SearchController, text: str, **kw) -> None:
    for i in range(1, len(text) + 1):  # key by key, no pause between: a burst
        ctl.ahead(SearchRequest(text[:i], **kw))


def test_a_pause_in_typing_searches_ahead_and_enter_takes_that_answer(qtbot, runner, fake):
    ctl = SearchController(fake, runner)
    shown = []
    ctl.results_ready.connect(shown.append)
    _typed(ctl, "async")
    qtbot.waitUntil(lambda: fake.search_calls == ["async"], timeout=5000)  # searched once typing paused
    qtbot.waitUntil(lambda: not runner.active(), timeout=5000)
    assert shown == []  # searched ahead: not shown on its own
    gen = ctl.search(SearchRequest("async", keep_chunk=7))  # Enter
    qtbot.waitUntil(lambda: bool(shown), timeout=5000)
    assert fake.search_calls == ["async"]  # not searched again
    assert shown[0].generation == gen == ctl.generation and shown[0].results
    assert shown[0].request.keep_chunk == 7  # the Enter's own request (which passage stays selected)
    ctl.search(SearchRequest("async"))  # taken over once only: a second Enter searches again
    qtbot.waitUntil(lambda: len(shown) == 2, timeout=5000)
    assert fake.search_calls == ["async", "async"]


def test_enter_takes_over_a_search_ahead_still_running(qtbot, runner, fake):
    ctl = SearchController(fake, runner)
    shown = []
    ctl.results_ready.connect(shown.append)
    _typed(ctl, "async slow")  # the fake takes 0.6 s for this text
    qtbot.waitUntil(lambda: fake.search_calls == ["async slow"], timeout=5000)
    assert runner.active()  # still running when Enter comes
    ctl.search(SearchRequest("async slow"))
    qtbot.waitUntil(lambda: bool(shown), timeout=5000)
    assert fake.search_calls == ["async slow"] and shown[0].query == "async slow"


def test_a_burst_of_keys_then_enter_searches_once(qtbot, runner, fake):
    ctl = SearchController(fake, runner)
    shown = []
    ctl.results_ready.connect(shown.append)
    _typed(ctl, "async")
    ctl.search(SearchRequest("async"))  # Enter before typing paused
    qtbot.waitUntil(lambda: bool(shown), timeout=5000)
    qtbot.wait(AHEAD_PAUSE_MS * 3)  # deliberate: a search ahead would have started by now; none may
    assert fake.search_calls == ["async"]


def test_another_text_or_filter_is_searched_anew(qtbot, runner, fake):
    ctl = SearchController(fake, runner)
    shown = []
    ctl.results_ready.connect(shown.append)
    _typed(ctl, "async")
    qtbot.waitUntil(lambda: fake.search_calls == ["async"], timeout=5000)
    qtbot.waitUntil(lambda: not runner.active(), timeout=5000)
    ctl.search(SearchRequest("async", filters=SearchFilters(kinds=("markdown",))))
    qtbot.waitUntil(lambda: len(shown) == 1, timeout=5000)
    ctl.search(SearchRequest("asyncio"))
    qtbot.waitUntil(lambda: len(shown) == 2, timeout=5000)
    assert fake.search_calls == ["async", "async", "asyncio"]
    assert [r.query for r in shown] == ["async", "asyncio"]


def test_an_answer_searched_ahead_for_an_older_text_is_dropped(qtbot, runner, fake):
    ctl = SearchController(fake, runner)
    shown = []
    ctl.results_ready.connect(shown.append)
    _typed(ctl, "async slow")
    qtbot.waitUntil(lambda: fake.search_calls == ["async slow"], timeout=5000)
    ctl.search(SearchRequest("async slow"))  # taken over while it runs ...
    ctl.search(SearchRequest("benchmarks"))  # ... and a newer search before it ends
    qtbot.waitUntil(lambda: not runner.active(), timeout=5000)
    assert [r.query for r in shown] == ["benchmarks"]


def test_with_a_reranker_only_the_vector_is_made_ahead(qtbot, runner, fake):
    fake.settings = dataclasses.replace(fake.settings,
                                        search=dataclasses.replace(fake.settings.search, rerank=True))
    ctl = SearchController(fake, runner)
    _typed(ctl, "async", backend="hybrid")
    qtbot.waitUntil(lambda: "async" in getattr(fake, "prepared", []), timeout=5000)
    qtbot.wait(AHEAD_PAUSE_MS * 3)  # deliberate: a search ahead would have started by now; none may
    assert fake.search_calls == []


def test_in_the_window_a_paused_query_is_shown_at_enter_without_searching_again(qtbot, make_window, docs_dir):
    """The real window: typed, a pause, Enter: the answer searched in the pause is what Enter shows."""
    fakes: list[FakeService] = []

    def factory(settings):
        fakes.append(FakeService(settings))
        return fakes[-1]

    w = make_window(factory)
    fakes[0].index_paths([docs_dir])
    box = w.search_bar.box
    w.search_bar._timer.setInterval(60_000)  # the bar's search-as-you-type debounce kept out of this race
    box.setFocus()
    qtbot.keyClicks(box, "benchmarks")  # typed key by key (the keys' own events), then the person pauses
    qtbot.waitUntil(lambda: "benchmarks" in fakes[0].search_calls, timeout=5000)
    calls = fakes[0].search_calls.count("benchmarks")
    with qtbot.waitSignal(w.search_finished, timeout=5000, check_params_cb=lambda q: q == "benchmarks"):
        qtbot.keyClick(box, Qt.Key.Key_Return)
    assert w.results_model.rowCount() > 0
    assert fakes[0].search_calls.count("benchmarks") == calls  # Enter took the answer over
