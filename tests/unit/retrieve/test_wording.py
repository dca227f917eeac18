"""Match strength from the question's wording (issue 30 item 1): the evidence (retrieve/wording.py) on a real
SQLite+FTS5 store, and the rule (retrieve/strength.judge) that uses it."""

from __future__ import annotations

import pytest

from desktop_memory.models import ChunkDraft, LaneHit, Location
from desktop_memory.retrieve.lanes import fts_lane
from desktop_memory.retrieve.strength import (
    COVER_MIN,
    HOLDS_ALL,
    MARGIN_MIN,
    ONLY_HERE,
    ONLY_HERE_ONE,
    STRONG,
    WEAK,
    WORDING_DENSE_RANK,
    WORDING_KEYWORD_RANK,
    LaneScale,
    judge,
)
from desktop_memory.retrieve.wording import Wording
from desktop_memory.store import Store

NOTES = {
    "car.txt": "Car log. Tyre pressure 2.3 bar front, 2.1 bar rear. Next service due in April at Hendry Motors.",
    "boiler.txt": "Boiler: if the pressure drops below 1 bar, open the filling loop. Annual service in September.",
    "sourdough.md": "Sourdough bread. Feed the starter the night before; bake in the Dutch oven at 250 degrees.",
    "skye.md": "Skye trip. The ferry from Mallaig to Armadale takes 45 minutes; midges in the evening.",
    "lisbon.md": "Lisbon trip. Custard tarts at Belem, the tram early in the morning, a day in Sintra.",
}
FILLER = ("Notes from a quiet day: a walk by the river, soup for lunch, emails in the afternoon, an early night "
          "after a film. Day {i}.")


def _library(tmp_path, filler: int = 0) -> Store:
    store = Store(tmp_path / f"lib{filler}.db")
    docs = dict(NOTES) | {f"journal/{i:04d}.txt": FILLER.format(i=i) for i in range(filler)}
    for path, text in docs.items():
        store.write_document(path=f"/notes/{path}", kind="text", language=None, title=None, size=len(text),
                             mtime=1.0, content_hash=path, chunks=[ChunkDraft(text, Location(char_end=len(text)))],
                             dedupe_keys=[path])
    return store


def _chunk(store: Store, name: str) -> int:
    return next(cid for cid, _ in fts_lane(store, name.split(".", maxsplit=1)[0], 50)
                if store.reads.chunk_rows([cid])[cid].path.endswith(name))


def _wording(store: Store, query: str) -> Wording:
    return Wording(store, query, fts_lane(store, query, 200))


@pytest.mark.parametrize("filler", [0, 2000])
def test_coverage_and_margin_do_not_depend_on_the_library_size(tmp_path, filler):
    store = _library(tmp_path, filler)
    car = _chunk(store, "car.txt")
    w = _wording(store, "tyre pressure")
    assert w.coverage(car) == pytest.approx(1.0)
    # the boiler note holds "pressure" (the commoner word): far behind, the same whatever the library's size
    assert 0.5 < w.margin(car) < 1.0
    assert not w.only_here(car)  # "pressure" is in the boiler note too
    w = _wording(store, "custard tarts")
    lisbon = _chunk(store, "lisbon.md")
    assert w.coverage(lisbon) == pytest.approx(1.0) and w.margin(lisbon) == pytest.approx(1.0)
    assert w.only_here(lisbon)


def test_a_word_no_passage_holds_weighs_most(tmp_path):
    store = _library(tmp_path)
    bread = _chunk(store, "sourdough.md")
    w = _wording(store, "bread xqzvblorft")
    assert 0 < w.coverage(bread) < 0.5  # half the words, less than half the weight
    w = _wording(store, "tyre sourdough ferry")  # words of three notes run together: no note holds most
    assert max(w.coverage(c) for c in (_chunk(store, "car.txt"), bread, _chunk(store, "skye.md"))) < COVER_MIN
    assert _wording(store, "xqzv blorft").coverage(bread) == 0.0


def test_two_files_holding_every_word_have_no_margin(tmp_path):
    store = _library(tmp_path)
    w = _wording(store, "trip")  # Skye and Lisbon notes both hold it
    assert w.coverage(_chunk(store, "skye.md")) == pytest.approx(1.0)
    assert w.margin(_chunk(store, "skye.md")) == pytest.approx(0.0)


def _judge(store: Store, query: str, cid: int, *, kw_rank: int = 1, dense_rank: int = 1,
           cos: float = 0.2) -> tuple[str, str]:
    hits = {"fts": LaneHit(kw_rank, 1.0), "dense": LaneHit(dense_rank, cos)}
    return judge(hits, LaneScale(ceiling=100.0), semantic=True, keyword=True, wording=_wording(store, query),
                 chunk_id=cid)


def test_distinctive_wording_high_in_both_lanes_is_strong_whatever_the_cosine(tmp_path):
    store = _library(tmp_path)
    car, skye, lisbon = _chunk(store, "car.txt"), _chunk(store, "skye.md"), _chunk(store, "lisbon.md")
    assert _judge(store, "tyre pressure", car) == (STRONG, HOLDS_ALL)
    assert _judge(store, "ferry", skye) == (STRONG, ONLY_HERE_ONE)
    assert _judge(store, "custard tarts", lisbon) == (STRONG, ONLY_HERE)
    # the lanes must rank it high
    assert _judge(store, "ferry", skye, kw_rank=WORDING_KEYWORD_RANK + 1)[0] == WEAK
    assert _judge(store, "ferry", skye, dense_rank=WORDING_DENSE_RANK + 1)[0] == WEAK
    assert _judge(store, "ferry", skye, dense_rank=WORDING_DENSE_RANK)[0] == STRONG
    # not distinctive: shared with another file, or only part of the question's weight
    assert _judge(store, "trip", skye)[0] == WEAK
    assert _judge(store, "ferry xqzvblorft", skye)[0] == WEAK
    assert _judge(store, "tyre sourdough ferry", car)[0] == WEAK
    assert MARGIN_MIN > 0


def test_the_old_agreement_rule_still_holds_and_no_semantic_rank_is_weak(tmp_path):
    store = _library(tmp_path)
    skye = _chunk(store, "skye.md")
    assert _judge(store, "xqzvblorft", skye, cos=0.7) == (STRONG, "")  # a close meaning needs no shared word
    hits = {"fts": LaneHit(1, 1.0)}
    assert judge(hits, LaneScale(ceiling=100.0), semantic=True, keyword=True, wording=_wording(store, "ferry"),
                 chunk_id=skye) == (WEAK, "")


def test_strong_first_lifts_only_what_strength_earns():
    """Issue 30: sorting the whole fused list strong-first cost SciFact test 0.0046 nDCG@10. A strong result keeps
    its fused place unless the question's wording made it strong (evidence fusion does not have) or it is as close
    in meaning as COS_CLOSE; those go first, in fused order."""
    from desktop_memory.retrieve.searcher import COS_CLOSE, strong_first

    fused = [(cid, 1.0 / cid, {"dense": LaneHit(cid, COS_CLOSE - 0.01)}) for cid in range(1, 11)]
    verdicts = {cid: (WEAK, "") for cid in range(1, 11)}
    verdicts[3] = (STRONG, "")  # strong by its cosine, below a weak #1: stays
    verdicts[9] = (STRONG, HOLDS_ALL)  # strong by the question's wording: lifted
    assert [cid for cid, _, _ in strong_first(fused, verdicts)] == [9, 1, 2, 3, 4, 5, 6, 7, 8, 10]
    # as close in meaning as COS_CLOSE: lifted from anywhere (issue 23's weak #1 above the page that answers)
    fused[7] = (8, fused[7][1], {"dense": LaneHit(1, COS_CLOSE)})
    verdicts[8] = (STRONG, "")
    assert [cid for cid, _, _ in strong_first(fused, verdicts)] == [8, 9, 1, 2, 3, 4, 5, 6, 7, 10]
    assert [cid for cid, _, _ in strong_first(fused[:5], verdicts)] == [1, 2, 3, 4, 5]  # the head of the longer
    # no strong result: the fused order exactly
    assert strong_first(fused, {cid: (WEAK, "") for cid in range(1, 11)}) == fused


def test_words_of_different_notes_run_together_are_weak_even_at_a_high_cosine(tmp_path):
    """A salad of the library's own words ("risotto brownies kimchi" in a recipe folder) can reach cosine 0.6 on
    the note about one of them; each word is in a different note and none holds more than one: weak."""
    store = _library(tmp_path)
    skye, car = _chunk(store, "skye.md"), _chunk(store, "car.txt")
    salad = "midges sourdough tyre"
    assert _wording(store, salad).scattered()
    assert _judge(store, salad, skye, cos=0.65) == (WEAK, "")
    assert not _wording(store, "tyre pressure").scattered()  # both words meet in the car log
    assert _judge(store, "tyre pressure", car, cos=0.65)[0] == STRONG
    assert not _wording(store, "ferry xqzvblorft").scattered()  # one word known: a paraphrase may still be close
    assert _judge(store, "ferry xqzvblorft", skye, cos=0.65) == (STRONG, "")
