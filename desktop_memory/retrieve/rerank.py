"""The optional second stage: a reranking server reorders the top of the fused list.

Any server speaking the Cohere/Jina ``POST /v1/rerank`` API (llama-server ``--reranking``, vLLM, Infinity, Jina;
TEI's own ``/rerank`` shape is understood too) scores the top ``rerank_depth`` fused passages against the query.
Their reranked order replaces the fused order for the passages it scored; everything below the depth keeps its
fused place. Each scored passage carries a "rerank" :class:`~desktop_memory.models.LaneHit` (rank among the scored,
the server's score), shown as "rerank #k, score s".

What a server turned out to want is learned once and remembered in the data folder (``rerank-servers.json``, by
the URL as given), so a later process (every CLI search, the MCP server) goes straight to it: Hugging Face
TEI serves ``/rerank`` at its root, not ``/v1/rerank`` (a bare server URL falls back to it on a 404), and takes
``{"query", "texts"}`` (learned from its 422 "missing field `texts`").

It never costs the person their results: a server that is down, slow (``rerank_timeout_s``, 2 s by default, no
retry: a second try would double the wait) or answers nonsense leaves the fused list as it was, with a note.

Match strength stays with the lanes (docs/RETRIEVAL.md, "Reranking"): a reranker's scores are on its own model's
scale, which this app cannot calibrate for a model the person brings; reranking changes the order, not which
passages count as strong.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..app_dirs import RERANK_SERVERS_FILE
from ..config import SearchSettings, data_dir
from ..embed.openai_http import JsonServer
from ..errors import EmbedderError, RerankError, ServerError
from ..models import LaneHit
from ..private_files import make_private_dirs, open_private
from ..store.protocol import LibraryStore
from .fusion import Fused
from .lanes import fetch_rows

if TYPE_CHECKING:
    import httpx

RERANK_LANE = "rerank"


def rerank_endpoint(url: str) -> str:
    """The URL to POST to: given as the endpoint (``…/rerank``), or a bare host (``/v1/rerank`` is added), or a
    base ending in a version (``…/v1`` → ``…/v1/rerank``)."""
    url = (url or "").strip().rstrip("/")
    try:
        path = urlsplit(url).path
    except ValueError:  # "http://[::1": kept as it is, refused with its reason on first use (JsonServer.client)
        return url
    if path.endswith("rerank"):
        return url
    if path in ("", "/"):
        return url + "/v1/rerank"
    return url + "/rerank"


def _bare_server(url: str) -> bool:
    """A server URL with no path (TEI's /rerank is then tried too); a malformed one is not, and fails on first use."""
    try:
        return urlsplit(url).path.strip("/") == ""
    except ValueError:
        return False


class HttpReranker:
    """A rerank endpoint. Thread-safe (one pooled client); nothing is contacted until the first ``rerank``."""

    def __init__(self, url: str, model: str = "", *, timeout_s: float = 2.0, api_key: str | None = None,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.configured = rerank_endpoint(url)
        self.model = (model or "").strip()
        self._key = (url or "").strip().rstrip("/")  # what was learned is kept under the URL as the person gave it
        self._bare = _bare_server(self._key)
        self._server_args: dict[str, Any] = {"what": "The reranker", "timeout_s": timeout_s, "key_name": "rerank",
                                             "api_key": api_key, "retries": 0, "transport": transport}
        learned = _learned().get(self._key, {})
        self._from_memo = bool(learned)
        self._use(str(learned.get("endpoint") or self.configured), tei=bool(learned.get("tei")))

    def _use(self, endpoint: str, *, tei: bool) -> None:
        self.endpoint = endpoint
        self._tei = tei  # the server wants TEI's {"query", "texts"}
        # a bare server URL (…:8081) gets /v1/rerank; TEI answers that with a 404 and serves /rerank
        self._root_route = self.configured.removesuffix("/v1/rerank") + "/rerank" \
            if self._bare and endpoint == self.configured else None
        old = getattr(self, "server", None)
        if old is not None:
            old.close()
        self.server = JsonServer(endpoint, **self._server_args)

    @classmethod
    def from_settings(cls, settings: SearchSettings) -> HttpReranker:
        return cls(settings.rerank_url, settings.rerank_model, timeout_s=settings.rerank_timeout_s)

    def __repr__(self) -> str:
        return f"HttpReranker({self.endpoint!r}, {self.model!r})"

    def close(self) -> None:
        self.server.close()

    def rerank(self, query: str, documents: Sequence[str]) -> list[tuple[int, float]]:
        """(index into ``documents``, score), best first; every document the server scored, at most once."""
        if not documents:
            return []
        try:
            data = self._post(query, documents)
        except ServerError as exc:
            if exc.kind == "model":
                raise RerankError(f'The reranker at {self.endpoint} has no model "{self.model}": {exc}') from exc
            raise RerankError(str(exc)) from exc
        return self._parse(data, len(documents))

    def _post(self, query: str, documents: Sequence[str]) -> Any:
        """The server's answer, learning (once, and for later processes) TEI's route and field names."""
        learned = False
        while True:
            try:
                data = self.server.request("POST", "", self._body(query, documents))
                break
            except ServerError as exc:
                if self._from_memo and (exc.kind == "no_route" or exc.status == 422):
                    self._from_memo = False  # another server at that address now: learn it again
                    self._use(self.configured, tei=False)
                elif exc.kind == "no_route" and self._root_route:
                    self._use(self._root_route, tei=self._tei)
                elif not self._tei and exc.status == 422 and "texts" in str(exc):
                    self._tei = True  # Hugging Face TEI: same idea, its own field names
                else:
                    raise
                learned = True
        if learned:
            _remember(self._key, {"endpoint": self.endpoint, "tei": self._tei})
        return data

    def check_connection(self) -> str:
        """One line for "Test connection": rank two short passages, say how long it took."""
        t0 = time.perf_counter()
        order = self.rerank("what colour is the sky", ["Grass is green.", "The sky is blue on a clear day."])
        ms = (time.perf_counter() - t0) * 1000
        top = "as expected" if order and order[0][0] == 1 else "the other way round (is it a reranking model?)"
        return f"Connected: {urlsplit(self.endpoint).netloc}, ranked a test pair {top} in {ms:.0f} ms"

    def _body(self, query: str, documents: Sequence[str]) -> dict[str, Any]:
        if self._tei:
            return {"query": query, "texts": list(documents), "truncate": True}
        body: dict[str, Any] = {"query": query, "documents": list(documents), "top_n": len(documents)}
        if self.model:
            body["model"] = self.model
        return body

    def _parse(self, data: Any, n: int) -> list[tuple[int, float]]:
        """Cohere/Jina ``{"results": [{"index", "relevance_score"}]}`` or TEI's ``[{"index", "score"}]``."""
        rows = data.get("results", data.get("data")) if isinstance(data, dict) else data
        if not isinstance(rows, list):
            raise RerankError(f"The reranker at {self.endpoint} sent a reply without results: is it a rerank "
                              "endpoint (…/v1/rerank)?")
        if len(rows) > n:
            raise RerankError(f"The reranker at {self.endpoint} sent {len(rows):,} results for {n} passages.")
        out: list[tuple[int, float]] = []
        seen: set[int] = set()
        for row in rows:
            try:
                index = int(row["index"])
                score = float(row["relevance_score"] if "relevance_score" in row else row["score"])
            except (KeyError, TypeError, ValueError) as exc:
                raise RerankError(f"The reranker at {self.endpoint} sent results in a shape this app does not "
                                  "read (expected index and relevance_score).") from exc
            if not 0 <= index < n or index in seen or not math.isfinite(score):
                raise RerankError(f"The reranker at {self.endpoint} sent an invalid result (index {index} of {n}, "
                                  f"score {score}).")
            seen.add(index)
            out.append((index, score))
        out.sort(key=lambda p: (-p[1], p[0]))
        return out


LEARNED_FILE = RERANK_SERVERS_FILE  # in the data folder: what each configured rerank endpoint turned out to want


def _learned() -> dict[str, dict[str, Any]]:
    try:
        with open(data_dir() / LEARNED_FILE, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def _remember(configured: str, what: dict[str, Any]) -> None:
    """Best effort (a read-only data folder only costs the extra round trip again next time)."""
    try:
        data = _learned()
        data[configured] = what
        make_private_dirs(data_dir())
        target = data_dir() / LEARNED_FILE
        tmp = target.with_suffix(f".json.{os.getpid()}.tmp")
        with open_private(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1)
        os.replace(tmp, target)
    except OSError:
        pass


def reorder(fused: Fused, scored: Sequence[tuple[int, float]], depth: int) -> Fused:
    """``fused`` with its first ``depth`` entries reordered: the scored ones (positions into that head) by score,
    best first (ties: fused order), each given a "rerank" hit; head entries left unscored follow in fused order;
    the rest is unchanged. Pure: the input list and its hit dicts are not modified."""
    head, tail = fused[:depth], fused[depth:]
    ranked = sorted(scored, key=lambda p: (-p[1], p[0]))
    out: Fused = []
    for k, (pos, score) in enumerate(ranked, start=1):
        cid, fscore, hits = head[pos]
        out.append((cid, fscore, {**hits, RERANK_LANE: LaneHit(rank=k, score=score)}))
    done = {pos for pos, _ in ranked}
    out += [entry for pos, entry in enumerate(head) if pos not in done]
    return out + list(tail)


def rerank_fused(store: LibraryStore, reranker: HttpReranker, query: str, fused: Fused, depth: int,
                 notes: list[str]) -> Fused:
    """The search's rerank stage: the reordered list, or ``fused`` itself with a note when the reranker failed."""
    head = fused[: max(0, depth)]
    if len(head) < 2:
        return fused
    rows = fetch_rows(store, [cid for cid, _, _ in head])
    live = [pos for pos, (cid, _, _) in enumerate(head) if cid in rows]  # a concurrent writer may have removed one
    try:
        order = reranker.rerank(query, [rows[head[pos][0]].text for pos in live])
    except EmbedderError as exc:
        notes.append(f"rerank off, fused order kept: {exc}")
        return fused
    except Exception as exc:  # whatever else a broken setting or server causes, the search still answers
        notes.append(f"rerank off, fused order kept: the reranker failed ({type(exc).__name__})")
        return fused
    return reorder(fused, [(live[i], score) for i, score in order], len(head))
