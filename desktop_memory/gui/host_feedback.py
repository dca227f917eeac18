"""What the window says about the library's and the model's life (the :class:`~.service_host.ServiceHost`'s
signals): the library cannot be opened (a banner with Retry and Choose location…), notices said when it opens
(read-only, made owner-only), the model loading / ready / failed (the status bar and a banner with Retry and
Settings…), settings that could not be saved.

Why apart from the window: each is a sentence and a place to show it, nothing the window decides; the window keeps
what it does when the library opens or the model is ready (its parts get the service, the search runs again).
"""

from __future__ import annotations

from collections.abc import Callable

from ..service_api import MemoryApi
from .banner import BannerArea
from .messages import error_text, show_open_notices
from .service_host import ServiceHost
from .settings import plain_error
from .status_bar import StatusBar


def show_host_feedback(host: ServiceHost, banners: BannerArea, status: StatusBar, *, retry_open: Callable[[], None],
                       settings_page: Callable[[str], None]) -> None:
    """Connect ``host``'s signals to ``banners`` and ``status``; ``settings_page(key)`` opens Settings at a page
    ("" the library's, "embedder" the model's). Connect it before the window's own handlers: a banner is cleared
    before the parts that use the new library hear of it."""

    def opened(svc: MemoryApi) -> None:
        banners.dismiss("store")
        show_open_notices(banners, svc)

    def open_failed(exc: BaseException, _tb: str) -> None:
        status.counts.setText("No library open")
        banners.show_message(
            f"Cannot open the database {host.settings.library_shown()}: {error_text(exc)}", "error", key="store",
            actions=[("Retry", retry_open), ("Choose location…", lambda: settings_page(""))])

    def embedder_state(state: str, text: str, tip: str) -> None:
        status.set_embedder(state, text, tip)
        if state == "ready":
            banners.dismiss("embedder")

    host.opened.connect(opened)
    host.open_failed.connect(open_failed)
    host.embedder_state.connect(embedder_state)
    host.embedder_failed.connect(lambda text: banners.show_message(
        plain_error(text), "warning", key="embedder",
        actions=[("Retry", host.load_embedder), ("Settings…", lambda: settings_page("embedder"))]))
    host.save_failed.connect(lambda text: banners.show_message(text, "warning", key="settings-save"))


__all__ = ["show_host_feedback"]
