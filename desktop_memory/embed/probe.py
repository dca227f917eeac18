"""Trying an embedder before it is chosen: the CLI's ``embedder --test`` and the window's switch share it, so both
judge a model the same way (a failed probe means nothing is saved or switched: issue 30)."""

from __future__ import annotations

from .base import Embedder


def probe(embedder: Embedder) -> str:
    """One sentence on what answered: a server's own connection check, or the model loaded and one word embedded.
    Raises whatever the embedder raises (the caller words it); the embedder is closed either way."""
    try:
        check = getattr(embedder, "check_connection", None)
        if check is not None:
            return str(check())
        embedder.load()
        embedder.embed_query("test")
        return f"{embedder.model_id} ({embedder.dim}-d) runs on this computer"
    finally:
        close = getattr(embedder, "close", None)
        if close is not None:
            close()
