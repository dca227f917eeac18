"""Match strength: is a result a real match, or just the nearest thing to a query the library cannot answer?

A result is *strong* when what the lanes measured says it answers the query; the outcome is *weak* when no
result is strong ("no strong matches"), and the prompt context leaves weak results out by default.

- **The question's wording** (hybrid, issue 30): strong when the passage is among the keyword lane's first
  ``WORDING_KEYWORD_RANK`` and the semantic lane's first ``WORDING_DENSE_RANK``, and holds at least ``COVER_MIN``
  of the question's weight *in this library* (each word weighs its IDF here; a word no passage holds weighs most),
  ``MARGIN_MIN`` more than any other file's passage (wording.py). Both are shares, so the rule does not depend on
  the library's size or the question's length: "tyre pressure" in a six-file notes folder (car log #1 in both
  lanes, cosine 0.34) is strong; nonsense holds little of its own weight (unknown words), or spreads it over
  several files (margin 0). The result says why (``strength_reason``: "every word of the question is found only
  here", ...). Chosen on the personal-library train folders (``python -m desktop_memory_bench.personal --split
  train``: right answers coverage 1.0 and margin >= 0.46 but one (0.56, strong by its cosine), nonsense coverage <=
  0.42); on SciFact train it makes 1 of 1,500 nonsense queries (seeds 13-17) strong, and 3 relevant passages.
- **Words of different notes run together** (hybrid): when two or more of the question's words are held among
  the keyword lane's first chunks but no file holds more than one ("risotto brownies kimchi" in a recipe
  folder: cosine 0.61 on the kimchi note), a result holding less than ``SCATTERED_COVER`` of the weight is weak
  whatever its cosine (8 of SciFact train's 1,500 nonsense queries; no relevant result). A veto on every result
  holding less than half the weight with no margin would have cost Cranfield's relevant top-3 strong share
  97 % -> 57 %: long questions are rarely held whole.
- **Both lanes ran** (hybrid): strong ⇔ cosine ≥ ``COS_AGREE`` and cosine + ``AGREE_WEIGHT`` × *share* ≥
  ``AGREE_TARGET``, where *share* is the chunk's BM25 as a share of the query's ceiling (below). A cosine of 0.58
  is strong on its own; below it the keyword lane must agree, more so the lower the cosine (0.50 needs a share of
  0.2, 0.44 needs 0.35). A word salad holding one distinctive word ("microbiota scenarios gastritis") reaches cosine
  0.5-0.6 on a chunk about that word, but that chunk holds a small share of the query's keyword weight; a real
  question's answer holds more of it. A result the semantic lane did not rank in its top 200 is weak whatever its
  keyword score.
- **A passage without a vector yet** (hybrid while the embedding runs): the semantic lane could not judge it, so
  the keyword rule below decides, as if the semantic lane were off (its missing cosine is no evidence against it).
- **The semantic lane alone** (dense backend): strong ⇔ cosine ≥ ``COS_STRONG``.
- **Keyword lane alone** (keyword/bm25 backend, or no vectors/embedder): strong ⇔ BM25 ≥ ``BM25_STRONG`` × the
  query's *ceiling*, Σ over the phrases the lane sends of idf · (k1 + 1) (what a chunk holding every query word
  infinitely often would score; a word no chunk holds counts at full weight). Computed lazily, only then.

Calibration (``scripts/calibrate_strength.py DB DATASET --split train --seeds 13,14,15,16,17``): SciFact **train**
(809 claims; 1,184 relevant results in their top 3) and 1,500 generated nonsense queries (seeds 13-17: word salad
from the corpus's own vocabulary, random letter strings, the two mixed; ``desktop_memory_bench/nonsense.py``), at
top_k 10. Share of relevant top-3 results called strong / share of nonsense queries with no strong result:

    cosine alone      0.46: 94.9 % / 91.9 %   **0.48: 93.8 % / 94.8 %**   0.50: 91.6 % / 96.9 %
    cos + λ·share ≥ t λ 0.3, t 0.56: 93.2 % / 98.3 %   λ 0.4, t 0.56: 94.6 % / 97.7 %
                      **λ 0.4, t 0.58: 93.3 % / 98.7 %**   λ 0.4, t 0.60: 92.2 % / 99.1 %
                      λ 0.5, t 0.58: 94.6 % / 98.2 %   (all with cosine ≥ 0.44)
    cos ≥ 0.55 alone, or cos ≥ 0.44 with share ≥ 0.15: 95.4 % / 97.5 %
    BM25 alone        0.20: 96.0 % / 88.9 %   **0.25: 89.4 % / 95.1 %**   0.30: 77.3 % / 97.7 %

Chosen: the rule with the widest smaller margin over the targets (≥ 90 % / ≥ 95 %) among ~200 tried. The
agreement rule beats every cosine alone on both counts; the dense backend, which has no keyword evidence, keeps
cosine ≥ 0.48. Keyword evidence alone cannot meet both targets (word salad drawn from the library's vocabulary
is, to BM25, a partial match like any other): 0.25 is the balance, and the outcome's notes say so when the
semantic lane is off. ``bench`` reports both shares on the test split with other nonsense queries (seed 0);
Cranfield (no train split) only checks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..models import STRONG, WEAK, LaneHit, SearchResult
from ..store.protocol import LibraryStore
from .compounds import compound_counts
from .keyword import doc_freqs, fts_rows, index_tokens, weightiest_terms
from .query_text import weighted_terms
from .wording import Wording

K1 = 1.2  # FTS5 bm25()'s k1: a term's contribution never reaches idf * (k1 + 1)

# thresholds (see the module docstring for where they come from)
COS_STRONG = 0.48  # semantic lane alone: a result is strong when its cosine reaches this
COS_AGREE = 0.44  # both lanes ran: below this cosine a result is weak; from it on, strong when
AGREE_WEIGHT = 0.4  # cosine + AGREE_WEIGHT x (BM25 share of the query's ceiling) ...
AGREE_TARGET = 0.58  # ... reaches this (so a cosine of 0.58 is strong on its own)
BM25_STRONG = 0.25  # keyword lane alone: ... when its BM25 reaches this share of the query's ceiling
# both lanes ran, the question's wording (wording.py): strong when the passage is among the keyword lane's first
WORDING_KEYWORD_RANK = 3  # ... this many and the semantic lane's first ...
WORDING_DENSE_RANK = 20  # ... this many, and holds ...
COVER_MIN = 0.6  # ... at least this share of the query's weight in this library, ...
MARGIN_MIN = 0.3  # ... this much more than the best passage of any other file
SCATTERED_COVER = 0.5  # the question's words each in a different passage: weak below this share, whatever the cosine

ONLY_HERE = "every word of the question is found only here"
ONLY_HERE_ONE = "the question's word is found only here"
HOLDS_ALL = "holds every word of the question, more than any other file"
HOLDS_MOST = "holds most of the question's distinctive words, more than any other file"


class LaneScale:
    """Per-query facts that put the keyword lane's raw BM25 on a fixed scale, computed only when a result's
    strength needs them (most hybrid results are decided by their cosine alone)."""

    def __init__(self, store: LibraryStore | None = None, query: str = "", ceiling: float | None = None) -> None:
        self._store = store
        self._query = query
        self._ceiling = ceiling

    @property
    def bm25_ceiling(self) -> float:
        """What a chunk holding every query term infinitely often would score (0: unknown)."""
        if self._ceiling is None:
            self._ceiling = keyword_ceiling(self._store, self._query) if self._store is not None else 0.0
        return self._ceiling


def normalised_bm25(hit: LaneHit | None, scale: LaneScale) -> float:
    """The keyword score as a share of the query's ceiling, in [0, 1); 0 when the lane did not find the chunk."""
    if hit is None:
        return 0.0
    ceiling = scale.bm25_ceiling
    return max(0.0, min(1.0, hit.score / ceiling)) if ceiling > 0 else 0.0


def judge(hits: dict[str, LaneHit], scale: LaneScale, *, semantic: bool, keyword: bool = False,
          vector: bool = True, wording: Wording | None = None, chunk_id: int = 0) -> tuple[str, str]:
    """(STRONG or WEAK, why: empty unless the question's wording decided it) for one result. ``semantic``: the
    dense lane ran for this query (hybrid or dense backend with vectors); then a result it did not rank in its top
    200 is weak whatever its keyword score. ``keyword``: a keyword lane ran too (hybrid), so a middling cosine
    needs the keyword lane's agreement, and ``wording`` (the query's words in this library, wording.py) may call a
    passage strong that holds the question's distinctive words ahead of every other file. ``vector``: the
    passage has a vector; one without (not embedded yet) is judged by the keyword rule when a keyword lane ran."""
    kw = hits.get("fts") or hits.get("bm25")
    if not semantic or (keyword and not vector):
        return (STRONG if normalised_bm25(kw, scale) >= BM25_STRONG else WEAK), ""
    dense = hits.get("dense")
    if dense is None:
        return WEAK, ""
    if not keyword:
        return (STRONG if dense.score >= COS_STRONG else WEAK), ""
    if dense.score >= COS_AGREE and dense.score + AGREE_WEIGHT * normalised_bm25(kw, scale) >= AGREE_TARGET:
        if wording is not None and wording.scattered() and wording.coverage(chunk_id) < SCATTERED_COVER:
            return WEAK, ""  # words of different notes run together, and this one holds less than half: a salad
        return STRONG, _wording_reason(wording, chunk_id, kw, dense)
    reason = _wording_reason(wording, chunk_id, kw, dense)
    return (STRONG, reason) if reason else (WEAK, "")


def _wording_reason(wording: Wording | None, chunk_id: int, kw: LaneHit | None, dense: LaneHit) -> str:
    """Why the question's wording makes this passage a strong match, or "" when it does not: the passage is among
    the keyword lane's first ``WORDING_KEYWORD_RANK`` and the semantic lane's first ``WORDING_DENSE_RANK``, holds
    at least ``COVER_MIN`` of the query's weight in this library, ``MARGIN_MIN`` more than any other file."""
    if wording is None or kw is None or kw.rank > WORDING_KEYWORD_RANK or dense.rank > WORDING_DENSE_RANK:
        return ""
    cover = wording.coverage(chunk_id)
    if cover < COVER_MIN or wording.margin(chunk_id) < MARGIN_MIN:
        return ""
    if cover >= 1.0 - 1e-9:
        if wording.only_here(chunk_id):
            return ONLY_HERE if wording.words() > 1 else ONLY_HERE_ONE
        return HOLDS_ALL
    return HOLDS_MOST


def strong_only(results: Sequence[SearchResult]) -> list[SearchResult]:
    """The results called strong, in order: what the prompt context takes by default."""
    return [r for r in results if r.strength == STRONG]


# ---------------------------------------------------------------- the keyword ceiling

def lane_scale(store: LibraryStore, query: str, lanes: dict[str, list[tuple[int, float]]]) -> LaneScale:
    """The lazily computed scale of this query (no keyword lane ran: no keyword evidence, ceiling 0)."""
    if "fts" not in lanes and "bm25" not in lanes:
        return LaneScale(ceiling=0.0)
    return LaneScale(store, query)


def keyword_ceiling(store: LibraryStore, query: str) -> float:
    """Sum over the query's phrases (repeats included, as the lane sends them) of idf * (k1 + 1), FTS5's idf."""
    counts = compound_counts(store, query)
    if not counts:
        return 0.0
    kept, unknown = weightiest_terms(store, counts)
    terms = weighted_terms(kept) + weighted_terms(unknown)  # the phrases the lane sends, and what nothing holds
    distinct = list(dict.fromkeys(terms))
    stems_of = dict(zip(distinct, index_tokens(store, distinct)))
    weight: dict[str, int] = {}
    for term in terms:
        for stem in stems_of.get(term, []):
            weight[stem] = weight.get(stem, 0) + 1
    n = fts_rows(store)
    dfs = doc_freqs(store, list(weight))
    ceiling = 0.0
    for stem, qtf in weight.items():
        df = dfs.get(stem, 0)  # a word no chunk holds counts at full weight: nothing answers that part
        idf = max(1e-6, math.log((n - df + 0.5) / (df + 0.5)))
        ceiling += qtf * idf * (K1 + 1)
    return ceiling
