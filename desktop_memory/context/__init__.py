"""Prompt context: token estimate, greedy packing in rank order, [Source: ...] formatting, what was dropped."""

from .packer import build_context, passage_body, source_line
from .tokens import estimate_tokens

__all__ = ["build_context", "estimate_tokens", "passage_body", "source_line"]
