"""The typed boundary between the front ends and the service: what the GUI may call, and nothing else.

Why a Protocol: the window and its controllers are written against this, not against ``MemoryService``, so the
GUI tests' in-memory fake (tests/gui/fake_service.py) and the real service are checked by mypy to offer the same
calls with the same types, and the GUI never needs ``Any``, ``hasattr`` or ``getattr`` to find out what a service
can do. Qt-free, like the service.

Thread rule (see service.py): every method may block on disk or the model, so the GUI calls them on worker
threads only (gui/tasks.py); the one exception is :meth:`MemoryApi.apply_settings`, which only swaps references.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from .config import EmbedderSettings, Settings
from .models import (
    ContextReport,
    DocumentInfo,
    IndexProgress,
    IndexSummary,
    LibraryListing,
    LibraryQuery,
    SearchFilters,
    SearchResult,
    Stats,
)

if TYPE_CHECKING:  # annotations only: importing retrieve (numpy, the store, the embedders) and the job scheduler
    # here put 1.2 s on the window's start-up before its first paint
    from .jobs import Scheduler
    from .model_servers import ModelServers
    from .retrieve import SearchOutcome

ProgressCallback = Callable[[IndexProgress], None]
ChangeStamp = tuple[int, ...]


class MemoryApi(Protocol):
    """The service as the GUI sees it (``MemoryService`` implements it; so does the tests' ``FakeService``)."""

    @property
    def settings(self) -> Settings: ...

    @property
    def read_only_note(self) -> str: ...  # "" or why the library is read-only (search still works)

    @property
    def scheduler(self) -> Scheduler: ...  # the one writer's jobs: reads, watch batches, removals, embedding

    @property
    def servers(self) -> ModelServers: ...  # test a model server, list its models (model_servers.py; no library)

    # -- writes (the service submits each as a job of its scheduler and waits for it) --
    def index_paths(self, paths: Iterable[str | Path], progress: ProgressCallback | None = None,
                    cancel: threading.Event | None = None, force: bool = False,
                    embed: bool = True, include_excluded: bool = False) -> IndexSummary: ...

    def embed_pending(self, progress: ProgressCallback | None = None,
                      cancel: threading.Event | None = None) -> IndexSummary: ...

    def remove_paths(self, paths: Iterable[str | Path], progress: ProgressCallback | None = None,
                     cancel: threading.Event | None = None, exclude: bool = False) -> int: ...

    def exclusions(self) -> list[str]: ...  # paths removed from inside a library folder: every walk leaves them out

    def pending_removals(self) -> list[str]: ...  # removals the app quit in the middle of (finished at start)

    def erasing_unfinished(self) -> bool: ...  # removed text still waits for the FTS merge (finished at start)

    def load_embedder(self) -> None: ...

    def embedder_model_id(self) -> str: ...

    def set_embedder_settings(self, new: EmbedderSettings) -> bool: ...

    def choose_configured_model(self) -> bool: ...  # build the configured model's vectors here (issue 30)

    def apply_settings(self, settings: Settings) -> None: ...

    # -- queries (the queries runner) --
    def search_outcome(self, query: str, backend: str | None = None, top_k: int | None = None,
                       filters: SearchFilters | None = None, *, marks: bool = False) -> SearchOutcome: ...

    def prepare_query(self, query: str, backend: str | None = None) -> bool: ...

    def build_context(self, results: Sequence[SearchResult], budget: int | None = None,
                      extra_roots: Sequence[str] = ()) -> ContextReport: ...

    def highlights(self, query: str, chunk_ids: Sequence[int]) -> dict[int, str]: ...

    def warm_up(self, cancel: threading.Event | None = None, *, semantic: bool = False) -> None: ...

    def stats(self) -> Stats: ...

    def embedding_paused(self) -> bool: ...  # the person's Cancel, remembered in the library until Resume

    def set_embedding_paused(self, paused: bool) -> None: ...

    def documents(self) -> list[DocumentInfo]: ...

    def library_listing(self, query: LibraryQuery, pages: Mapping[str, int],
                        eager_limit: int = 1000) -> LibraryListing: ...

    def library_page(self, query: LibraryQuery, folder_key: str, offset: int, limit: int) -> list[DocumentInfo]: ...

    def indexed_under(self, folder: str) -> dict[str, tuple[int, float]]: ...

    def roots(self) -> list[str]: ...  # this machine's library folders (a shared library: machines_view.py)

    def other_machines(self) -> dict[str, str]: ...  # {library folder: machine name} of the other machines'

    def change_stamp(self) -> ChangeStamp: ...

    def take_notices(self) -> list[str]: ...

    def compact(self, progress: ProgressCallback | None = None,
                cancel: threading.Event | None = None) -> tuple[int, int]: ...

    def close(self) -> None: ...


ServiceFactory = Callable[[Settings], MemoryApi]

__all__ = ["ChangeStamp", "MemoryApi", "ProgressCallback", "ServiceFactory"]
