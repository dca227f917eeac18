"""One retry loop for the JSON-over-HTTP model servers (Ollama, OpenAI-compatible), so both retry alike.

Connection errors, timeouts and dropped connections are retried with exponential backoff; an HTTP error answer is
retried only when the caller says it is transient. What is left after the last attempt comes back as a
:class:`Transient` failure, and each caller turns it into its own words (the messages people see differ by server).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # httpx costs ~0.1 s to import; only pay it when a server is actually used
    import httpx

TransientKind = Literal["connect", "timeout", "dropped", "status"]


@dataclass(frozen=True)
class Transient:
    """Why the last attempt failed: ``detail`` is the exception, or the ``httpx.Response`` for ``"status"``."""

    kind: TransientKind
    detail: Any
    attempts: int

    @property
    def tries(self) -> str:
        """``"1 attempt"`` / ``"4 attempts"``, as the messages say it."""
        return f"{self.attempts} attempt{'s' if self.attempts != 1 else ''}"


MAX_BODY_BYTES = 64 * 1024 * 1024  # a model server's answer, read in pieces and dropped past this (see read_bounded)
PER_ROW_BYTES = 128 * 1024  # an embedding as JSON numbers: 4,096 dimensions take ~100 KB


def body_cap(rows: int) -> int:
    """The largest answer accepted for ``rows`` embeddings: 64 MiB, or more for a batch that needs it."""
    return max(MAX_BODY_BYTES, rows * PER_ROW_BYTES)


class BodyTooLarge(Exception):
    """The server's answer passed ``limit`` bytes (``declared``: what its Content-Length said, if it said): the
    rest was not read. Never retried: the same question gets the same answer."""

    def __init__(self, limit: int, declared: int | None = None) -> None:
        super().__init__(f"more than {limit // (1024 * 1024)} MiB")
        self.limit = limit
        self.declared = declared

    def words(self) -> str:
        """"an answer of 600 MiB, more than the 64 MiB accepted" / "an answer larger than the 64 MiB accepted"."""
        mib = self.limit / (1024 * 1024)
        if self.declared is not None:
            return f"an answer of {self.declared / (1024 * 1024):,.0f} MiB, more than the {mib:,.0f} MiB accepted"
        return f"an answer larger than the {mib:,.0f} MiB accepted (reading stopped there)"


def read_bounded(client: httpx.Client, method: str, url: str, payload: Any, max_bytes: int) -> httpx.Response:
    """One request whose answer is read in pieces and given up past ``max_bytes`` (BodyTooLarge), so a broken or
    hostile server cannot fill the memory (a 600 MB answer took the CLI to 1.9 GB). A Content-Length above the cap
    is refused before any of the body is read. A server that trickles its answer, each piece within the read
    timeout, is given up at twice that timeout in all (httpx.ReadTimeout, worded as a timeout by the caller). The
    answer comes back complete, already decoded."""
    import httpx

    request = client.build_request(method, url, json=payload)
    limit = client.timeout.read
    deadline = time.monotonic() + 2 * limit if limit else None  # each read is timed; so is the whole answer
    resp = client.send(request, stream=True)
    try:
        declared = resp.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise BodyTooLarge(max_bytes, int(declared))
        chunks: list[bytes] = []
        size = 0
        for chunk in resp.iter_bytes():
            size += len(chunk)
            if size > max_bytes:
                raise BodyTooLarge(max_bytes)
            if deadline is not None and time.monotonic() > deadline:  # a trickle, each piece just in time
                raise httpx.ReadTimeout(f"the answer took more than twice {limit:g} s", request=request)
            chunks.append(chunk)
    finally:
        resp.close()
    headers = [(k, v) for k, v in resp.headers.multi_items()
               if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
    return httpx.Response(resp.status_code, headers=headers, content=b"".join(chunks), request=request)


class RequestFailed(Exception):
    """An HTTP error that is not worth retrying (neither connection, timeout nor dropped): the caller words it."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(str(cause))
        self.cause = cause


def send_with_retries(client: httpx.Client, method: str, url: str, payload: Any, *, attempts: int,
                      backoff_s: float, sleep: Callable[[float], None],
                      final_status: Callable[[httpx.Response], Exception | None],
                      max_bytes: int = MAX_BODY_BYTES) -> httpx.Response | Transient:
    """The first answer below HTTP 400, or the last transient failure after ``attempts`` tries.

    ``final_status(resp)`` is asked about every answer of 400 or more: an exception it returns is raised at once
    (a final 4xx), None retries. Any other ``httpx.HTTPError`` raises :class:`RequestFailed`; an answer larger than
    ``max_bytes`` raises :class:`BodyTooLarge` (the caller names the server)."""
    import httpx

    failure = Transient("connect", None, attempts)
    for attempt in range(attempts):
        if attempt:
            sleep(backoff_s * 2 ** (attempt - 1))
        try:
            resp = read_bounded(client, method, url, payload, max_bytes)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            failure = Transient("connect", exc, attempts)
            continue
        except httpx.TimeoutException as exc:
            failure = Transient("timeout", exc, attempts)
            continue
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
            failure = Transient("dropped", exc, attempts)
            continue
        except httpx.HTTPError as exc:
            raise RequestFailed(exc) from exc
        if resp.status_code >= 400:
            final = final_status(resp)
            if final is not None:
                raise final
            failure = Transient("status", resp, attempts)
            continue
        return resp
    return failure
