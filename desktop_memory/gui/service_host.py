"""Settings and the service's life: open, load the embedder, switch model or database, persist, close.

Settings are never edited in place: every change builds a new object (``dataclasses.replace``) and swaps it in
here, then hands it to the service (:meth:`MemoryApi.apply_settings` only swaps a reference). A worker that
started with the old object keeps reading a consistent old object.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from ..config import EmbedderSettings, Settings
from ..errors import SettingsError, UserError
from ..service_api import MemoryApi, ServiceFactory
from ..settings_file import save_settings
from .messages import error_text
from .tasks import TaskRunner

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class SettingsChange:
    """What a new settings object changes that the window must react to."""

    database: bool = False
    embedder: bool = False
    backend: bool = False


def default_service_factory(settings: Settings) -> MemoryApi:
    """Import lazily: the core pulls numpy/sqlite-vec; importing it on a worker keeps start-up instant."""
    from ..service import MemoryService

    return MemoryService(settings)


class ServiceHost(QObject):
    opened = Signal(object)  # the MemoryApi now in use
    open_failed = Signal(object, str)  # (exception, traceback)
    embedder_state = Signal(str, str, str)  # (state: loading|ready|error, status text, tooltip)
    embedder_failed = Signal(str)  # a sentence for the banner
    model_changed = Signal()  # another embedding model was chosen: its vectors are to be built beside the old
    settings_saved = Signal()
    save_failed = Signal(str)

    def __init__(self, settings: Settings, runner: TaskRunner, factory: ServiceFactory | None = None,
                 settings_path: Path | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.settings_path = settings_path
        self._factory: ServiceFactory = factory or default_service_factory
        self._runner = runner
        self.svc: MemoryApi | None = None
        self.state = "loading"
        self._shown_state: tuple[str, str, str] = ("loading", "Embedder: loading…", "")  # the status pill's now
        self.closing = False

    # -- settings ----------------------------------------------------------------------------------------
    def replace(self, new: Settings, persist: bool = True) -> None:
        """Swap in a new settings object (the service gets it too); the old one is left as it was."""
        self.settings = new
        if self.svc is not None:
            self.svc.apply_settings(new)
        if persist:
            self.persist()

    def apply(self, new: Settings) -> SettingsChange:
        """Take the Settings dialog's result: swap it in (keeping the window's own ``gui`` state), persist it, and
        start switching the embedder when it changed. A new database is the caller's to reopen (see reopen)."""
        old = self.settings
        change = SettingsChange(database=(old.resolved_db_path(), old.db_url) != (new.resolved_db_path(), new.db_url),
                                embedder=old.embedder != new.embedder, backend=old.search.backend != new.search.backend)
        # the embedder is switched only once the service agrees (change_embedder), except with a new database
        self.replace(dataclasses.replace(new, gui=dict(old.gui),
                                         embedder=new.embedder if change.database else old.embedder))
        if change.embedder and not change.database:
            self.change_embedder(new.embedder)
        return change

    def update(self, **changes: Any) -> None:
        """``update(search=...)``: replace whole sections; ``gui`` entries are merged into a new dict."""
        if "gui" in changes:
            changes["gui"] = {**self.settings.gui, **changes["gui"]}
        self.replace(dataclasses.replace(self.settings, **changes), persist=False)

    def persist(self) -> None:
        try:
            save_settings(self.settings, self.settings_path)
        except OSError as exc:
            self.save_failed.emit(f"Could not save settings: {exc}. Check that the config folder is writable.")
        except SettingsError as exc:  # the file on disk was broken by hand meanwhile: it is never overwritten
            self.save_failed.emit(f"Settings were not saved. {exc}")
        else:
            self.settings_saved.emit()

    # -- service life --------------------------------------------------------------------------------------
    def open(self) -> None:
        """Open (or create) the database on a worker; the window stays usable meanwhile."""
        settings = self.settings

        def open_service() -> MemoryApi:
            svc = self._factory(settings)
            import desktop_memory.watch  # noqa: F401  # here, on the worker: the watch starts once the service is open

            return svc

        self._runner.submit(open_service, name="open-service", channel="open",
                            on_done=self._opened, on_error=self._open_failed)

    def _opened(self, svc: MemoryApi) -> None:
        if self.closing:
            svc.close()
            return
        self.svc = svc
        self.opened.emit(svc)
        self.load_embedder()

    def _open_failed(self, exc: BaseException, tb: str) -> None:
        if not isinstance(exc, UserError):
            log.error("opening the database failed:\n%s", tb)
        self.open_failed.emit(exc, tb)

    def reopen(self) -> None:
        """Another database: close the old service on a worker (after its jobs), open the new one."""
        old, self.svc = self.svc, None
        if old is not None:
            self._runner.submit(old.close, name="close-service")
        self.open()

    def close(self) -> None:
        """Shutdown: the runners must be idle (see MainWindow.shutdown)."""
        self.closing = True
        svc, self.svc = self.svc, None
        if svc is not None:
            try:
                svc.close()
            except Exception:
                log.exception("closing the service")

    # -- embedder ------------------------------------------------------------------------------------------
    def _set_state(self, state: str, text: str, tip: str = "") -> None:
        self.state = state
        self._shown_state = (state, text, tip)
        self.embedder_state.emit(state, text, tip)

    def load_embedder(self) -> None:
        svc = self.svc
        if svc is None:
            return
        es = self.settings.embedder
        what = {"ollama": f"Ollama {es.ollama_model}", "openai": f"{es.openai_model} on {es.openai_url}"}.get(
            es.kind, "local model")
        self._set_state("loading", f"Embedder: loading {what}…")

        def load() -> str:
            svc.load_embedder()
            return svc.embedder_model_id()

        self._runner.submit(load, name="load-embedder", channel="embedder", on_done=self._embedder_loaded,
                            on_error=self._embedder_error)

    def _embedder_loaded(self, model: str) -> None:
        self._set_state("ready", f"Embedder: ready · {model}" if model else "Embedder: ready")

    def _embedder_error(self, exc: BaseException, tb: str) -> None:
        if not isinstance(exc, UserError):
            log.error("embedder failed to load:\n%s", tb)
        remote = self.settings.embedder.kind in ("ollama", "openai")
        state = "Embedder: unreachable" if remote else "Embedder: unavailable"
        self._set_state("error", state, error_text(exc))
        self.embedder_failed.emit(f"Semantic search is off: {error_text(exc)} Keyword search still works.")

    def change_embedder(self, es: EmbedderSettings) -> None:
        """Switch model on a worker; the new settings are kept once the service has switched."""
        svc = self.svc
        if svc is None:
            self.replace(dataclasses.replace(self.settings, embedder=es))
            return
        before = self._shown_state
        self._set_state("loading", "Embedder: testing the new model…")

        def switch() -> bool:
            svc.servers.try_embedder(es)  # first: a model that does not answer changes nothing (issue 30)
            return svc.set_embedder_settings(es)

        def done(build: bool) -> None:
            self.replace(dataclasses.replace(self.settings, embedder=es))
            if build:
                self.model_changed.emit()
            self.load_embedder()

        def failed(exc: BaseException, tb: str) -> None:
            if not isinstance(exc, UserError):
                log.error("switching the embedder failed:\n%s", tb)
            self._set_state(*before)  # the model in use is as it was (first: "ready" clears the embedder banner)
            self.embedder_failed.emit(f"The embedding model was not changed: {error_text(exc)} Nothing was saved; "
                                      "search goes on with the library's vectors.")

        self._runner.submit(switch, name="set-embedder", on_done=done, on_error=failed)
