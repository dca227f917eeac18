"""One typed Settings model, persisted as TOML in the user's config dir. Every default path is decided here."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib
import tomli_w

from . import APP_NAME
from .private_files import make_private_dirs, open_private

ENV_CONFIG_DIR = "DESKTOP_MEMORY_CONFIG_DIR"  # tests and portable installs point this elsewhere
ENV_DATA_DIR = "DESKTOP_MEMORY_DATA_DIR"

BACKENDS = ("hybrid", "keyword", "bm25", "dense")
EMBEDDERS = ("local", "ollama")


def config_dir() -> Path:
    return Path(os.environ.get(ENV_CONFIG_DIR) or platformdirs.user_config_dir(APP_NAME, appauthor=False))


def data_dir() -> Path:
    return Path(os.environ.get(ENV_DATA_DIR) or platformdirs.user_data_dir(APP_NAME, appauthor=False))


def default_db_path() -> Path:
    return data_dir() / "memory.db"


def settings_path() -> Path:
    return config_dir() / "settings.toml"


@dataclass
class ChunkSettings:
    """Chunk sizes in characters. MiniLM reads at most 256 tokens (≈ 1,100 chars of prose) and was trained on 128;
    on SciFact train (nDCG@10, hybrid / dense) targets of 1,400 → 1,000 → 800 → 600 chars gave 0.716 / 0.671,
    0.726 / 0.687, 0.732 / 0.690, 0.731 / 0.696: 800 is the best fused ranking for +10 % tokens to embed
    (docs/BENCHMARKS.md, "Chunk size")."""

    target_chars: int = 800
    max_chars: int = 1100  # hard cap (≈ the model's 256 tokens), the safety net for code/URLs
    overlap_chars: int = 150
    code_lines: int = 40
    code_overlap_lines: int = 5
    dedupe_min_files: int = 3  # a chunk text repeated in at least this many files counts as boilerplate


@dataclass
class IngestSettings:
    max_file_mb: float = 50.0
    pdf_timeout_s: float = 120.0
    pdf_max_memory_mb: int = 1536
    ocr: bool = False  # image-only PDF pages → text, with the optional "ocr" extra (slow: seconds per page)
    follow_symlinks: bool = False
    extra_ignore: list[str] = field(default_factory=list)  # extra glob names to skip


@dataclass
class EmbedderSettings:
    kind: str = "local"  # "local" | "ollama"
    local_model_dir: str = ""  # empty = the bundled all-MiniLM-L6-v2 int8
    max_tokens: int = 256  # where the model's input is cut (MiniLM's limit; 128 measured worse, docs/BENCHMARKS.md)
    batch_size: int = 32  # rows per model call, at most...
    batch_tokens: int = 1024  # ...and at most this many padded tokens (0 = no limit): caps activation memory
    # (4 rows at 256 tokens: 330 MB peak and as fast as 32 rows at 1 GB on 2 cores, docs/BENCHMARKS.md)
    threads: int = 0  # 0 = decide from the core count
    ollama_url: str = "http://localhost:11434"
    ollama_model: str = "nomic-embed-text"
    ollama_timeout_s: float = 60.0
    query_prefix: str = ""
    document_prefix: str = ""


@dataclass
class SearchSettings:
    backend: str = "hybrid"
    top_k: int = 10
    fusion: str = "rrf"  # "rrf" (weighted Reciprocal Rank Fusion) or "zscore" (standardised lane scores); see retrieve/fusion.py
    rrf_k: int = 60  # used when fusion = "rrf" (the textbook k; the SciFact grid is in docs/BENCHMARKS.md)
    keyword_weight: float = 1.0
    dense_weight: float = 1.0
    overfetch: int = 5  # each lane fetches top_k * overfetch, at least 200 (retrieve/searcher.LANE_DEPTH)
    # keyword lane on big libraries: leave out the commonest query terms once their summed document frequency
    # exceeds this many rows (0 = never); below it BM25 is exact. See retrieve/keyword.py.
    keyword_term_budget: int = 20000


@dataclass
class ContextSettings:
    budget_tokens: int = 2048
    # how sources are named in the pasted block and MCP results: relative (to the indexed folder, default),
    # absolute, or name (file name only); see context/paths.py. `search --json` always keeps the absolute path.
    path_style: str = "relative"


@dataclass
class DesktopSettings:
    # how "Open" shows a hit at its place: a command with {path}, {line}, {page} placeholders, run without a shell
    # (e.g. "code --goto {path}:{line}", "okular --page {page} {path}"); empty = a per-platform default
    # (gui/desktop.py), falling back to the system's default app
    open_with: str = ""  # text, Markdown and code files
    open_pdf_with: str = ""  # PDFs ({page})


@dataclass
class WatchSettings:
    """Live folders (desktop_memory/watch/): which watches are paused, and how an event storm becomes one update."""

    paused_all: bool = False  # every folder's watch paused
    paused: tuple[str, ...] = ()  # folders whose watch is paused (absolute paths, as in the library)
    quiet_ms: int = 300  # a batch of changes is indexed once no event arrived for this long...
    max_wait_ms: int = 1500  # ...or this long after its first event, whichever comes first


@dataclass
class TraySettings:
    """The tray icon and the quick-search popup (gui/shell.py)."""

    close_to_tray: bool = False  # closing the main window keeps the app running in the tray (off: closing quits)


@dataclass
class Settings:
    db_path: str = ""  # empty = default_db_path()
    chunking: ChunkSettings = field(default_factory=ChunkSettings)
    ingest: IngestSettings = field(default_factory=IngestSettings)
    embedder: EmbedderSettings = field(default_factory=EmbedderSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    context: ContextSettings = field(default_factory=ContextSettings)
    desktop: DesktopSettings = field(default_factory=DesktopSettings)
    watch: WatchSettings = field(default_factory=WatchSettings)
    tray: TraySettings = field(default_factory=TraySettings)
    gui: dict[str, Any] = field(default_factory=dict)  # window geometry, splitter state, last filters

    def resolved_db_path(self) -> Path:
        return Path(self.db_path).expanduser() if self.db_path else default_db_path()

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Settings:
        """Build from a (possibly partial or older) dict; unknown keys are ignored, missing keys take defaults."""
        s = cls()
        for f in dataclasses.fields(cls):
            if f.name not in data:
                continue
            value = data[f.name]
            current = getattr(s, f.name)
            if dataclasses.is_dataclass(current) and isinstance(value, dict):
                known = {sf.name for sf in dataclasses.fields(current)}
                setattr(s, f.name, type(current)(**{k: v for k, v in value.items() if k in known}))
            elif not dataclasses.is_dataclass(current):
                setattr(s, f.name, value)
        return s


def _drop_none(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _drop_none(v) for k, v in obj.items() if v is not None}
    if isinstance(obj, list):
        return [_drop_none(v) for v in obj]
    return obj


def load_settings(path: Path | None = None) -> Settings:
    """Read settings; a missing file gives defaults, an unreadable one gives defaults (never blocks start-up)."""
    path = path or settings_path()
    try:
        with open(path, "rb") as fh:
            return Settings.from_dict(tomllib.load(fh))
    except FileNotFoundError:
        return Settings()
    except (OSError, tomllib.TOMLDecodeError, TypeError, ValueError):
        return Settings()


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    """Write atomically (temp file + rename) so a crash never leaves a half-written config."""
    path = path or settings_path()
    make_private_dirs(path.parent)  # owner-only: 0700 folder, 0600 file whatever the umask (private_files.py)
    tmp = path.with_suffix(".toml.tmp")
    with open_private(tmp, "wb") as fh:
        tomli_w.dump(_drop_none(settings.to_dict()), fh)
    os.replace(tmp, path)
    return path
