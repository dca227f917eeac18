"""How much of a query's distinctive wording a passage holds, measured in *this* library (match strength's
keyword evidence for short questions; strength.py says how it is used).

A query's words weigh what they say about this library: a word held by few passages weighs much, a word held by
most weighs almost nothing, and a word no passage holds weighs most of all (nothing answers that part of the
question). The weight is BM25's smoothed IDF, log(1 + (N - df + 0.5) / (df + 0.5)), always positive. A passage's
*coverage* is the share of the query's weight its file holds in the measured passages (this one and the file's
others among them: a car log that says "Car log" in its first passage and "Next service due" in its second answers
"next car service"): 1.0 when every word is there, whatever the question's length or the library's size. Its
*margin* is how far that is ahead of the best other file: a word salad of common words ("patients results") is held
whole by many files (margin 0); "tyre pressure" by the car log alone.

Only the keyword lane's first ``CANDIDATES`` chunks are measured (a passage outside them holds little of the
query's weight, or the lane would have ranked it higher), and only when a result's strength asks: their texts are
read by id and run through the index's own tokenizer (so the cost does not grow with the library), the words'
document frequencies come from the keyword ceiling's cache, and *only here* (is the word held by any other file?)
costs one statement per word, asked only for words held by at most ``UNIQUE_DF`` chunks. All of it depends only on
the index.
"""

from __future__ import annotations

import math

from ..store.protocol import LibraryStore
from .compounds import compound_counts
from .keyword import doc_freqs, fts_rows, index_tokens
from .query_text import quote_fts

CANDIDATES = 10  # the keyword lane's first chunks whose wording is measured
MAX_WORDS = 64  # a longer query keeps its first 64 distinct words here (short questions are the point)
UNIQUE_DF = 64  # "found only here" is asked only of words held by at most this many chunks


class Wording:
    """One query's words, their weights in this library, and what the keyword lane's first chunks hold of them.
    Computed on first use (most results are decided by the lanes' scores alone)."""

    def __init__(self, store: LibraryStore, query: str, keyword_ranked: list[tuple[int, float]]) -> None:
        self._store = store
        self._query = query
        self._ids = [cid for cid, _ in keyword_ranked[:CANDIDATES]]
        self._loaded = False
        self._weights: dict[str, float] = {}
        self._dfs: dict[str, int] = {}
        self._held: dict[str, set[int]] = {}
        self._docs: dict[int, int] = {}
        self._cover: dict[int, float] = {}
        self._only: dict[int, bool] = {}

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        store = self._store
        terms = list(compound_counts(store, self._query))[:MAX_WORDS]
        stems = dict(zip(terms, index_tokens(store, terms)))
        terms = [t for t in terms if stems.get(t)]  # a word the index tokenizer drops is not a word of the query
        if not terms:
            return
        dfs = doc_freqs(store, sorted({s for t in terms for s in stems[t]}))
        n = fts_rows(store)
        rows = store.reads.chunk_rows(self._ids)
        ids = [cid for cid in self._ids if cid in rows]
        # each measured chunk's tokens, from its text through the index's own tokenizer: a cost that does not grow
        # with the library (a MATCH restricted to a few rowids still reads the word's whole doclist)
        asked = sorted({s for t in terms for s in stems[t]})
        tokens = dict(zip(ids, store.reads.tokens_held([rows[cid].text for cid in ids], asked)))
        self._docs = {cid: rows[cid].doc_id for cid in ids}
        for t in terms:
            df = min(dfs.get(s, 0) for s in stems[t])  # a phrase of several tokens: at most its rarest one's
            self._dfs[t] = df
            self._weights[t] = math.log(1 + (n - df + 0.5) / (df + 0.5))
            # the files whose measured passages hold the word
            self._held[t] = {self._docs[cid] for cid in ids if df > 0 and set(stems[t]) <= tokens[cid]}
        total = sum(self._weights.values())
        for doc in set(self._docs.values()):
            self._cover[doc] = sum(w for t, w in self._weights.items() if doc in self._held[t]) / total

    def coverage(self, chunk_id: int) -> float:
        """The share of the query's weight this chunk's file holds in the measured passages (0 when the chunk is
        not among them)."""
        self._load()
        doc = self._docs.get(chunk_id)
        return 0.0 if doc is None else self._cover.get(doc, 0.0)

    def margin(self, chunk_id: int) -> float:
        """This chunk's coverage minus the best coverage of another file (its coverage when no other file holds
        any of the words among the measured passages)."""
        self._load()
        doc = self._docs.get(chunk_id)
        if doc is None:
            return 0.0
        return self._cover.get(doc, 0.0) - max((c for d, c in self._cover.items() if d != doc), default=0.0)

    def only_here(self, chunk_id: int) -> bool:
        """Every word of the query is in this chunk's file and in no other file."""
        self._load()
        if chunk_id in self._only:
            return self._only[chunk_id]
        doc = self._docs.get(chunk_id)
        found = (doc is not None and bool(self._weights)
                 and all(doc in self._held[t] and self._dfs[t] <= UNIQUE_DF for t in self._weights)
                 and not any(self._store.reads.held_elsewhere(quote_fts(t), doc) for t in self._weights))
        self._only[chunk_id] = found
        return found

    def scattered(self) -> bool:
        """Words of different notes run together: two or more of the query's words are held among the measured
        passages, but no file holds more than one of them ("risotto brownies kimchi" in a recipe folder). A real
        question's words meet in its answer; a salad's do not."""
        self._load()
        found = [t for t in self._weights if self._held[t]]
        if len(found) < 2:
            return False
        return all(sum(doc in self._held[t] for t in found) <= 1 for doc in self._cover)

    def words(self) -> int:
        """How many distinct words of the query the index knows how to tokenize."""
        self._load()
        return len(self._weights)
