"""One retry loop for the JSON-over-HTTP model servers (Ollama, OpenAI-compatible), so both retry alike.

Connection errors, timeouts and dropped connections are retried with exponential backoff; an HTTP error answer is
retried only when the caller says it is transient. What is left after the last attempt comes back as a
:class:`Transient` failure, and each caller turns it into its own words (the messages people see differ by server).
"""

from __future__ import annotations

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


class RequestFailed(Exception):
    """An HTTP error that is not worth retrying (neither connection, timeout nor dropped): the caller words it."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(str(cause))
        self.cause = cause


def send_with_retries(client: httpx.Client, method: str, url: str, payload: Any, *, attempts: int,
                      backoff_s: float, sleep: Callable[[float], None],
                      final_status: Callable[[httpx.Response], Exception | None]) -> httpx.Response | Transient:
    """The first answer below HTTP 400, or the last transient failure after ``attempts`` tries.

    ``final_status(resp)`` is asked about every answer of 400 or more: an exception it returns is raised at once
    (a final 4xx), None retries. Any other ``httpx.HTTPError`` raises :class:`RequestFailed`."""
    import httpx

    failure = Transient("connect", None, attempts)
    for attempt in range(attempts):
        if attempt:
            sleep(backoff_s * 2 ** (attempt - 1))
        try:
            resp = client.request(method, url, json=payload)
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
