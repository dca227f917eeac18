"""Model servers as the front ends see them: test a connection, list a server's models, try an embedder before
switching to it, and the query/document prefixes known models want. Qt-free.

Why here and not in the front ends: the window's Settings dialog and the CLI's ``embedder``/``rerank --test`` would
otherwise build embedders and rerankers themselves, and the front ends never import ``embed`` or ``retrieve`` (the
"Front ends reach the core only through the service" contract in pyproject.toml). The window asks its service
(``MemoryApi.servers``); the CLI's server commands, which open no library, make a ``ModelServers`` of their own.
Every call may wait seconds on the network: the window runs them on a worker, never on the UI thread.
"""

from __future__ import annotations

from typing import NamedTuple

from .config import EmbedderSettings, SearchSettings
from .embed.prefixes import known_prefixes, prefixes_for, prefixes_to_fill
from .errors import EmbedderError, OpenAIModelMissing, ServerError

__all__ = ["WARN", "ModelServers", "ServerAnswer", "known_prefixes", "prefixes_for", "prefixes_to_fill"]

WARN = "⚠ "  # a status that starts with it is a warning (the server answered, but not as hoped), not a ✓
MIN_TEST_TIMEOUT_S = 5.0  # a reranker's search-time timeout (2 s by default) is too short for a first, cold answer


class ServerAnswer(NamedTuple):
    """What Test connection found: one status line, and the models the server lists (empty when it lists none)."""

    status: str
    models: list[str]


def _listing(models: list[str]) -> str:
    shown = ", ".join(models[:8]) + (" …" if len(models) > 8 else "")
    return f"{len(models)} model{'s' if len(models) != 1 else ''}: {shown}"


class ModelServers:
    """The probes, each raising EmbedderError with the fix when the server cannot be used. Holds no state: the
    service hands out one, and a front end without a library may make its own."""

    def test_ollama(self, es: EmbedderSettings) -> ServerAnswer:
        """The server's version and models, and one word embedded with the chosen model. A server that is up
        without that model still gives its list, so the person can pick one."""
        from .embed.ollama import OllamaEmbedder

        emb = OllamaEmbedder(es)
        try:
            models = emb.list_models()
            try:
                status = emb.check_connection()
            except EmbedderError as exc:
                status = f"Server reachable, but: {exc}"
            return ServerAnswer(status, models)
        finally:
            emb.close()

    def test_openai(self, es: EmbedderSettings, api_key: str | None = None) -> ServerAnswer:
        """An OpenAI-compatible server's models and one embedding. With no model chosen yet the list is the answer
        (the Model box offers it); a model the server does not list is warned about even when the server embeds
        with it (a proxy's wildcard route may answer for a misspelt name). ``api_key`` is tried instead of the
        stored one (a key typed but not saved yet)."""
        from .embed.openai_compat import OpenAICompatEmbedder

        emb = OpenAICompatEmbedder(es, api_key=api_key or None, retries=0)
        try:
            try:
                models = emb.list_models()
            except ServerError as exc:
                if exc.kind not in ("no_route", "rejected", "bad_reply"):  # down, or the key refused: say so
                    raise
                models = []  # no /v1/models on this server: the embedding probe still tells
            if not es.openai_model.strip():
                if not models:
                    raise EmbedderError("The server lists no models: type the name of its embedding model in the "
                                        "Model box above.")
                return ServerAnswer(f"{WARN}Connected; no model chosen yet: the server lists {_listing(models)}. "
                                    "Pick one in the Model box above, then Test connection again.", models)
            try:
                status = emb.check_connection()
            except OpenAIModelMissing as exc:
                return ServerAnswer(f"{WARN}Server reachable, but: {exc}", models)
            if models and es.openai_model not in models:
                status = (f"{WARN}{status}. But the server does not list the model {es.openai_model} (it lists "
                          f"{_listing(models)}): check its name; another model may be answering for it.")
            return ServerAnswer(status, models)
        finally:
            emb.close()

    def test_reranker(self, ss: SearchSettings, api_key: str | None = None) -> ServerAnswer:
        """Rank a test pair on the reranking server and time it (it lists no models)."""
        from .retrieve.rerank import HttpReranker

        rr = HttpReranker(ss.rerank_url, ss.rerank_model, timeout_s=max(ss.rerank_timeout_s, MIN_TEST_TIMEOUT_S),
                          api_key=api_key or None)
        try:
            return ServerAnswer(rr.check_connection(), [])
        finally:
            rr.close()

    def try_embedder(self, es: EmbedderSettings) -> str:
        """Load the local model, or contact the server and embed one word, before anything switches to ``es``
        (a failure raises, and then nothing is saved or switched: issue 30). One sentence on what answered."""
        from .embed import make_embedder
        from .embed.probe import probe

        return probe(make_embedder(es))
