"""Token estimate for prompt budgets without a tokenizer.

ceil(ASCII bytes / 4) + ceil(non-ASCII chars / 1.5): within ~20-25 % of real BPE counts (GPT/Claude-style
tokenizers) for prose and code, and it rarely under-counts, so a block packed to the budget fits in practice.
"""

from __future__ import annotations

import math


def estimate_tokens(text: str) -> int:
    if not text:
        return 0
    ascii_count = sum(1 for ch in text if ord(ch) < 128)
    other = len(text) - ascii_count
    return math.ceil(ascii_count / 4) + math.ceil(other / 1.5)
