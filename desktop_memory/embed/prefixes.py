"""The query/document prefixes that known embedding models were trained with, to pre-fill Settings.

Asymmetric retrieval models expect a marker before each text: e5 reads "query: …" and "passage: …", nomic-embed-text
"search_query: …" and "search_document: …", the bge-*-en-v1.5 / mxbai / arctic-embed family an instruction before
the query only. Left out, such a model still works but ranks measurably worse. These are only pre-filled values:
the person can change them, and the document prefix is part of the index's model id (changing it re-embeds).
"""

from __future__ import annotations

import re

_RETRIEVAL_INSTRUCTION = "Represent this sentence for searching relevant passages: "

# (pattern on the lower-cased model name, (query prefix, document prefix)); first match wins
KNOWN_PREFIXES: tuple[tuple[re.Pattern[str], tuple[str, str]], ...] = (
    (re.compile(r"e5-mistral|e5-.*instruct"), ("", "")),  # instruction-tuned: a task sentence, not a marker
    (re.compile(r"(^|[/_:\-.])(multilingual-)?e5-(small|base|large)"), ("query: ", "passage: ")),
    (re.compile(r"nomic-embed-text"), ("search_query: ", "search_document: ")),
    (re.compile(r"snowflake-arctic-embed.*(v2|2\.0)"), ("query: ", "")),
    (re.compile(r"bge-(small|base|large)-en|mxbai-embed-large|snowflake-arctic-embed"), (_RETRIEVAL_INSTRUCTION, "")),
)


def known_prefixes(model: str) -> tuple[str, str] | None:
    """(query prefix, document prefix) for a model name the table knows (any spelling: ``intfloat/e5-base-v2``,
    ``e5-small-v2.Q8_0.gguf``, ``nomic-embed-text:latest``), or None when it does not know the model."""
    name = (model or "").strip().lower()
    if not name:
        return None
    for pattern, prefixes in KNOWN_PREFIXES:
        if pattern.search(name):
            return prefixes
    return None


def prefixes_for(model: str, query_prefix: str, document_prefix: str) -> tuple[str, str] | None:
    """The prefixes to fill in for ``model``, or None to leave the fields alone: only when the model is known and the
    fields are empty or hold another known model's prefixes (a person's own prefixes are never overwritten)."""
    known = known_prefixes(model)
    if known is None or known == (query_prefix, document_prefix):
        return None
    ours = {p for _, p in KNOWN_PREFIXES} | {("", "")}
    return known if (query_prefix, document_prefix) in ours else None


def prefixes_to_fill(model: str, query_prefix: str, document_prefix: str) -> tuple[str, str] | None:
    """As :func:`prefixes_for`, and a model the table does not know clears prefixes that were filled in for
    another model (they are ours to clear; a person's own are kept)."""
    new = prefixes_for(model, query_prefix, document_prefix)
    if new is None and known_prefixes(model) is None and \
            (query_prefix, document_prefix) in {p for _, p in KNOWN_PREFIXES}:
        return ("", "")
    return new
