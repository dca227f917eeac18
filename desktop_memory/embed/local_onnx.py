"""Local embeddings on onnxruntime: the bundled all-MiniLM-L6-v2 (int8) or any BERT-like ONNX export.

Embedding is the indexer's bottleneck, so the hot path avoids waste:
texts are tokenized once (truncated, *not* padded), sorted by token length, cut into batches of
similar length and padded only to each batch's longest row; the rows go back in input order.
Row results do not depend on what else is in the batch (padding is masked out of the pooling).

onnxruntime and tokenizers are imported inside ``load()`` so importing this module stays cheap.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ..config import EmbedderSettings
from ..errors import EmbedderError
from .base import recipe_suffix
from .model_check import folder_fingerprint, verified_bundled_model

DEFAULT_MODEL_ID = "all-MiniLM-L6-v2-int8"
DEFAULT_DIM = 384
TOKENIZER_RESOURCE = "minilm-tokenizer.json"  # in desktop_memory/resources/
_FEEDABLE_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
MIN_TOKENS = 8


def default_threads() -> int:
    """Cores this process may use (affinity/cgroup-aware where the OS tells us)."""
    if sys.platform == "linux":  # the only platform with sched_getaffinity among those we ship for
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except OSError:
            pass
    return max(1, os.cpu_count() or 1)


def _default_model_path() -> Path:
    """The bundled model, found from package metadata and checked against its pinned sha256 (model_check.py)."""
    return verified_bundled_model()


def _find_custom_model(model_dir: Path) -> tuple[Path, Path]:
    """(model.onnx, tokenizer.json) inside a user-chosen folder, or an EmbedderError that says what is missing."""
    if not model_dir.is_dir():
        raise EmbedderError(
            f"The embedding model folder {model_dir} does not exist: choose a folder that holds "
            "model.onnx and tokenizer.json, or clear the setting to use the bundled model."
        )
    model: Path | None = None
    for folder in (model_dir, model_dir / "onnx"):  # Hugging Face repos often keep the export in onnx/
        if (folder / "model.onnx").is_file():
            model = folder / "model.onnx"
            break
        found = sorted(folder.glob("*.onnx")) if folder.is_dir() else []
        if len(found) == 1:
            model = found[0]
            break
        if len(found) > 1:
            names = ", ".join(p.name for p in found)
            raise EmbedderError(
                f"The folder {folder} holds several ONNX files ({names}) and none is named model.onnx: "
                "rename the one to use to model.onnx."
            )
    if model is None:
        raise EmbedderError(
            f"No ONNX model in {model_dir}: the folder needs model.onnx (an ONNX export of a "
            "sentence-embedding model) next to its tokenizer.json."
        )
    tokenizer = model_dir / "tokenizer.json"
    if not tokenizer.is_file():
        raise EmbedderError(
            f"No tokenizer.json in {model_dir}: copy the model's tokenizer.json (Hugging Face tokenizers "
            "format) into that folder."
        )
    return model, tokenizer


class LocalOnnxEmbedder:
    """An :class:`~desktop_memory.embed.base.Embedder` that runs an ONNX model in-process.

    Thread-safe: loading is guarded by a lock, and ``embed_*`` may be called from several threads
    at once (onnxruntime's ``run`` and the tokenizer's ``encode_batch`` are re-entrant).
    """

    allow_spinning = False  # onnxruntime's busy-wait between parallel sections (class-level knob for benchmarks)

    def __init__(self, settings: EmbedderSettings | None = None) -> None:
        self.settings = settings or EmbedderSettings()
        raw_dir = (self.settings.local_model_dir or "").strip()
        self._model_dir: Path | None = Path(raw_dir).expanduser() if raw_dir else None
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: tuple[str, ...] = ()
        self._output_name = ""
        self._pad_id = 0
        self._dim: int | None = None if self._model_dir else DEFAULT_DIM
        self._fingerprint: str | None = None  # digest of a chosen folder's files, computed on first use

    # -- identity -------------------------------------------------------------------------------

    @property
    def model_id(self) -> str:
        """The bundled model's name (its file is verified by checksum), or ``onnx:<folder>#<digest>`` for a chosen
        folder: the digest of its model and tokenizer files, so replacing them reads as a model change."""
        if self._model_dir is None:
            base = DEFAULT_MODEL_ID
        else:
            base = f"onnx:{self._model_dir.name or self._model_dir.resolve().name}"
            if self._fingerprint is None:
                try:
                    self._fingerprint = folder_fingerprint(list(_find_custom_model(self._model_dir)))
                except (EmbedderError, OSError):
                    self._fingerprint = ""  # missing files: load() says what is wrong
            if self._fingerprint:
                base += f"#{self._fingerprint}"
        return base + recipe_suffix(self.settings.document_prefix or "", self.settings.max_tokens)

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.load()
        assert self._dim is not None
        return self._dim

    @property
    def is_loaded(self) -> bool:
        return self._session is not None

    @property
    def threads(self) -> int:
        return self.settings.threads if self.settings.threads and self.settings.threads > 0 else default_threads()

    # -- loading --------------------------------------------------------------------------------

    def load(self) -> None:
        """Load tokenizer and model once; safe to call from any thread, any number of times."""
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            if self.settings.max_tokens < MIN_TOKENS:
                raise EmbedderError(
                    f"max_tokens is {self.settings.max_tokens}; it must be at least {MIN_TOKENS} "
                    "(256 suits MiniLM): fix it in Settings."
                )
            if self._model_dir is None:
                model_path = _default_model_path()
                tokenizer = self._load_tokenizer(None)
            else:
                model_path, tok_path = _find_custom_model(self._model_dir)
                tokenizer = self._load_tokenizer(tok_path)
            session = self._load_session(model_path)
            self._inspect_session(session, tokenizer, model_path)
            self._tokenizer = tokenizer
            self._session = session  # published last: other threads test it without the lock

    def _load_tokenizer(self, path: Path | None) -> Any:
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedderError("The local embedder needs the 'tokenizers' package: reinstall desktop-memory.") from exc
        try:
            if path is None:
                bundled = resources.files("desktop_memory").joinpath("resources").joinpath(TOKENIZER_RESOURCE)
                text = bundled.read_text("utf-8")
                tok = Tokenizer.from_str(text)
            else:
                tok = Tokenizer.from_file(str(path))
        except FileNotFoundError as exc:
            raise EmbedderError(
                f"The bundled tokenizer ({TOKENIZER_RESOURCE}) is missing: reinstall desktop-memory."
            ) from exc
        except Exception as exc:  # tokenizers raises a bare Exception on a malformed file
            where = path or TOKENIZER_RESOURCE
            raise EmbedderError(
                f"Cannot read the tokenizer {where}: {exc}. It must be a Hugging Face tokenizer.json."
            ) from exc
        # MiniLM's shipped tokenizer.json truncates *and pads* to a fixed 128: undo both. We truncate at
        # the model's trained length and pad per batch ourselves (dynamic padding, after length sorting).
        padding = tok.padding
        if padding and isinstance(padding.get("pad_id"), int):
            self._pad_id = int(padding["pad_id"])
        else:
            pad = tok.token_to_id("[PAD]")
            self._pad_id = pad if pad is not None else 0
        tok.no_padding()
        tok.enable_truncation(max_length=int(self.settings.max_tokens))
        return tok

    def _load_session(self, model_path: Path) -> Any:
        try:
            import onnxruntime as ort
        except ImportError as exc:
            raise EmbedderError(
                "The local embedder needs the 'onnxruntime' package: reinstall desktop-memory."
            ) from exc
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = self.threads
        opts.inter_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        # Memory patterns pay off only for fixed shapes; with dynamic padding every new (batch, length)
        # shape caches another plan, which cost ~300 MB extra peak RSS for no measurable speed.
        opts.enable_mem_pattern = False
        if not self.allow_spinning:
            # Idle pool threads sleep instead of busy-waiting: the indexer's other threads (extraction,
            # SQLite writes) and the GUI share these cores.
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.log_severity_level = 3  # errors only; warnings about unused initialisers are noise for users
        try:
            return ort.InferenceSession(str(model_path), sess_options=opts, providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise EmbedderError(
                f"Cannot load the ONNX model {model_path}: {exc}. The file may be damaged or not an ONNX model."
            ) from exc

    def _inspect_session(self, session: Any, tokenizer: Any, model_path: Path) -> None:
        inputs = [i.name for i in session.get_inputs()]
        unknown = [n for n in inputs if n not in _FEEDABLE_INPUTS]
        if "input_ids" not in inputs or unknown:
            raise EmbedderError(
                f"The ONNX model {model_path} takes inputs {inputs}; a BERT-style embedding model "
                f"with {', '.join(_FEEDABLE_INPUTS)} is needed."
            )
        out = session.get_outputs()[0]
        shape = list(out.shape or [])
        dim = shape[-1] if shape and isinstance(shape[-1], int) else None
        if len(shape) not in (0, 2, 3):
            raise EmbedderError(
                f"The ONNX model {model_path} outputs shape {shape}; expected token states "
                "(batch, tokens, dim) or pooled vectors (batch, dim)."
            )
        self._input_names = tuple(inputs)
        self._output_name = out.name
        if dim is None:  # symbolic last axis: ask the model
            probe = tokenizer.encode("dimension probe")
            dim = int(self._run_session(session, [probe.ids], [probe.type_ids])[0].shape[-1])
        if self._model_dir is None and dim != DEFAULT_DIM:
            raise EmbedderError(
                f"The bundled model {model_path} returns {dim}-dimensional vectors, not {DEFAULT_DIM}: "
                "the file is damaged; reinstall desktop-memory."
            )
        self._dim = int(dim)

    # -- embedding ------------------------------------------------------------------------------

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) float32 unit rows, in input order; ``document_prefix`` is prepended to each text."""
        prefix = self.settings.document_prefix or ""
        return self._embed([prefix + t for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        """(dim,) float32 unit vector; ``query_prefix`` is prepended."""
        vector: np.ndarray = self._embed([(self.settings.query_prefix or "") + text])[0]
        return vector

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens the model actually sees per document (special tokens included, after truncation)."""
        if not texts:
            return []
        self.load()
        prefix = self.settings.document_prefix or ""
        return [len(e.ids) for e in self._tokenizer.encode_batch([prefix + t for t in texts])]

    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self.load()
        encodings = self._tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids), reverse=True)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for rows in self._batches(order, [len(e.ids) for e in encodings]):
            batch = [encodings[i] for i in rows]
            hidden = self._run_session(self._session, [e.ids for e in batch], [e.type_ids for e in batch])
            out[rows] = self._pool(hidden)
        return out

    def _batches(self, order: list[int], lengths: list[int]) -> list[list[int]]:
        """Cut rows (longest first) into batches of at most ``batch_size`` rows and ``batch_tokens`` padded tokens.

        Activation memory grows with rows × width² (attention), so a fixed row count that is cheap for short
        texts costs hundreds of MB at 256 tokens; a token budget keeps peak memory flat while short texts still
        batch widely.
        """
        max_rows = max(1, int(self.settings.batch_size or 1))
        budget = int(self.settings.batch_tokens or 0)
        batches: list[list[int]] = []
        current: list[int] = []
        width = 0
        for i in order:
            w = max(width, lengths[i])
            if current and (len(current) >= max_rows or (budget and (len(current) + 1) * w > budget)):
                batches.append(current)
                current, w = [], lengths[i]
            current.append(i)
            width = w
        if current:
            batches.append(current)
        return batches

    def _run_session(
        self, session: Any, ids: list[list[int]], type_ids: list[list[int]]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Pad one batch to its longest row and run it; returns (first output, attention mask)."""
        width = max(len(r) for r in ids)
        input_ids = np.full((len(ids), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        types = np.zeros((len(ids), width), dtype=np.int64)
        for r, (row, trow) in enumerate(zip(ids, type_ids)):
            input_ids[r, : len(row)] = row
            mask[r, : len(row)] = 1
            types[r, : len(trow)] = trow
        arrays = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": types}
        feed = {name: arrays[name] for name in self._input_names}
        try:
            (hidden,) = session.run([self._output_name], feed)
        except Exception as exc:
            raise EmbedderError(
                f"The embedding model failed on a batch of {len(ids)} texts ({width} tokens): {exc}. "
                "Try a smaller batch size or max_tokens in Settings."
            ) from exc
        return np.asarray(hidden, dtype=np.float32), mask

    @staticmethod
    def _pool(result: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """Mean over real tokens (or the model's own pooled vector), then L2-normalise."""
        hidden, mask = result
        if hidden.ndim == 3:
            m = mask[..., None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        elif hidden.ndim == 2:
            pooled = hidden
        else:
            raise EmbedderError(f"The embedding model returned an array of shape {hidden.shape}; expected 2 or 3 axes.")
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: np.ndarray = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit
