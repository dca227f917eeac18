"""Which embedder made a library's vectors, recorded so the library can embed its queries with that model again.

A library keeps the settings that made each of its vector sets (``vector_models.settings``, store/model_sets.py)
as JSON, without any API key (keys live in api_keys.py, looked up by name when the embedder is made). So a
library opened while another model is configured still searches by meaning with its own vectors, as long as their
model is available here (the bundled local model always is), instead of switching semantic search off.
"""

from __future__ import annotations

import dataclasses
import json
import re

from ..config import EmbedderSettings
from ..errors import EmbedderError
from .base import Embedder
from .local_onnx import DEFAULT_MODEL_ID

_FIELDS = {f.name for f in dataclasses.fields(EmbedderSettings)}
_HASH_ID = re.compile(r"hash-test-(\d+)")


def settings_json(settings: EmbedderSettings) -> str:
    """The settings as the library records them (every field of EmbedderSettings; none of them is a secret)."""
    return json.dumps(dataclasses.asdict(settings), sort_keys=True)


def settings_from_json(text: str | None) -> EmbedderSettings | None:
    """Recorded settings back (fields this version does not know are ignored; None when unreadable)."""
    if not text:
        return None
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            return None
        return EmbedderSettings(**{k: v for k, v in data.items() if k in _FIELDS})
    except (ValueError, TypeError):
        return None


def known_settings(model_id: str) -> EmbedderSettings | None:
    """Settings that make ``model_id`` when none were recorded (a library from before model sets): the bundled
    local model, and the test-only hash model."""
    if model_id == DEFAULT_MODEL_ID:
        return EmbedderSettings(kind="local")
    if _HASH_ID.fullmatch(model_id):
        return EmbedderSettings(kind="hash")
    return None


def embedder_for(model_id: str, dim: int, recorded: str | None) -> Embedder | None:
    """An embedder that makes ``model_id``'s ``dim``-d vectors, or None when this computer cannot make it (no
    recorded settings, or they now name another model). Nothing is loaded or contacted here."""
    from . import make_embedder

    settings = settings_from_json(recorded) or known_settings(model_id)
    if settings is None:
        return None
    try:
        embedder = make_embedder(settings, expected_dim=dim)
        return embedder if embedder.model_id == model_id else None
    except (EmbedderError, OSError, ValueError):  # e.g. a chosen model folder that is gone
        return None


__all__ = ["embedder_for", "known_settings", "settings_from_json", "settings_json"]
