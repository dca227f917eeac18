"""Generated queries that no library answers, for the match-strength figures.

Three kinds, in turn: word salad drawn from the corpus's own vocabulary (the hard case: every word matches
something, nothing matches the whole), random letter strings, and the two mixed. The seed is fixed, so every run
scores the same queries; calibration (retrieve/strength.py) used another seed.
"""

from __future__ import annotations

import random
import re

_WORD = re.compile(r"[A-Za-z]{3,}")
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def corpus_vocabulary(texts: list[str], limit_docs: int = 2000) -> list[str]:
    """Distinct lower-cased alphabetic words (3+ letters) of the first ``limit_docs`` texts, sorted."""
    return sorted({w.lower() for t in texts[:limit_docs] for w in _WORD.findall(t)})


def _junk(rng: random.Random, lo: int = 3, hi: int = 9) -> str:
    return "".join(rng.choice(LETTERS) for _ in range(rng.randint(lo, hi)))


def nonsense_queries(vocabulary: list[str], n: int, seed: int = 0) -> list[str]:
    """``n`` nonsense queries: word salad, letter strings and mixes, in turn."""
    rng = random.Random(seed)
    words = vocabulary or ["lorem"]
    out: list[str] = []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            q = " ".join(rng.choice(words) for _ in range(rng.randint(3, 12)))
        elif kind == 1:
            q = " ".join(_junk(rng) for _ in range(rng.randint(1, 6)))
        else:
            n_words = rng.randint(2, 8)
            q = " ".join(rng.choice(words) if rng.random() < 0.5 else _junk(rng, 6, 6) for _ in range(n_words))
        out.append(q)
    return out
