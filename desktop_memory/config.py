"""One typed, validated Settings model, persisted as TOML in the user's config dir. Every default path is decided here.

The dataclasses are frozen: a Settings value never changes under a reader (the service, a worker thread); code that
wants other settings builds new ones with ``dataclasses.replace``. A settings file is validated on load by msgspec,
driven by the field annotations below (types, and ranges declared next to each field with ``msgspec.Meta``), so a
field added later is checked without any extra code; the few rules that tie two fields together are in
``_cross_field_problems``. A file that does not parse or does not validate raises SettingsError naming the key, the
file and the line; it is never replaced by defaults silently, and ``save_settings`` refuses to overwrite it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import os
import re
import sys
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
import platformdirs

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib
import tomli_w

from . import APP_NAME
from .errors import UserError
from .private_files import make_private_dirs, open_private

ENV_CONFIG_DIR = "DESKTOP_MEMORY_CONFIG_DIR"  # tests and portable installs point this elsewhere
ENV_DATA_DIR = "DESKTOP_MEMORY_DATA_DIR"

Backend = Literal["hybrid", "keyword", "bm25", "dense"]
BACKENDS: tuple[Backend, ...] = ("hybrid", "keyword", "bm25", "dense")
EMBEDDERS = ("local", "ollama", "openai")
MAX_TOP_K = 1000  # results a search may return (settings, CLI and the service share it)

# Value types with their ranges, declared once and used next to the fields.
Chars = Annotated[int, msgspec.Meta(ge=100, le=100_000)]
NonNegInt = Annotated[int, msgspec.Meta(ge=0)]
Seconds = Annotated[float, msgspec.Meta(gt=0, le=86_400)]
Weight = Annotated[float, msgspec.Meta(ge=0, le=1000)]
EmbedderKind = Literal["local", "ollama", "openai", "hash"]


def config_dir() -> Path:
    return Path(os.environ.get(ENV_CONFIG_DIR) or platformdirs.user_config_dir(APP_NAME, appauthor=False))


def data_dir() -> Path:
    return Path(os.environ.get(ENV_DATA_DIR) or platformdirs.user_data_dir(APP_NAME, appauthor=False))


def default_db_path() -> Path:
    return data_dir() / "memory.db"


def settings_path() -> Path:
    return config_dir() / "settings.toml"


@dataclass(frozen=True)
class ChunkSettings:
    """Chunk sizes in characters. MiniLM reads at most 256 tokens (≈ 1,100 chars of prose) and was trained on 128;
    on SciFact train (nDCG@10, hybrid / dense) targets of 1,400 → 1,000 → 800 → 600 chars gave 0.716 / 0.671,
    0.726 / 0.687, 0.732 / 0.690, 0.731 / 0.696: 800 is the best fused ranking for +10 % tokens to embed
    (docs/BENCHMARKS.md, "Chunk size")."""

    target_chars: Chars = 800
    max_chars: Chars = 1100  # hard cap (≈ the model's 256 tokens), the safety net for code/URLs
    overlap_chars: Annotated[int, msgspec.Meta(ge=0, le=50_000)] = 150
    code_lines: Annotated[int, msgspec.Meta(ge=1, le=10_000)] = 40
    code_overlap_lines: Annotated[int, msgspec.Meta(ge=0, le=10_000)] = 5


@dataclass(frozen=True)
class IngestSettings:
    max_file_mb: Annotated[float, msgspec.Meta(gt=0, le=1_000_000)] = 50.0
    pdf_timeout_s: Seconds = 120.0
    pdf_max_memory_mb: Annotated[int, msgspec.Meta(ge=64, le=1_000_000)] = 1536
    pdf_engine: Literal["auto", "pdfium", "pdfplumber"] = "auto"  # "auto": PDFium, then pdfplumber if it finds nothing
    ocr: bool = False  # image-only PDF pages → text, with the optional "ocr" extra (slow: seconds per page)
    follow_symlinks: bool = False
    # Patterns to leave out, gitignore syntax, relative to each indexed folder ("*.log", "docs/drafts/", "/TODO.md").
    extra_ignore: tuple[str, ...] = ()
    use_ignore_files: bool = True  # honour .gitignore and .dmignore files inside indexed folders


@dataclass(frozen=True)
class EmbedderSettings:
    kind: EmbedderKind = "local"  # "hash": a meaningless test-only fake (tests, benchmarks)
    local_model_dir: str = ""  # empty = the bundled all-MiniLM-L6-v2 int8
    # where the model's input is cut (MiniLM's limit; 128 measured worse, docs/BENCHMARKS.md)
    max_tokens: Annotated[int, msgspec.Meta(ge=8, le=8192)] = 256
    batch_size: Annotated[int, msgspec.Meta(ge=1, le=4096)] = 32  # rows per model call, at most...
    batch_tokens: NonNegInt = 1024  # ...and at most this many padded tokens (0 = no limit): caps activation memory
    # (4 rows at 256 tokens: 330 MB peak and as fast as 32 rows at 1 GB on 2 cores, docs/BENCHMARKS.md)
    threads: Annotated[int, msgspec.Meta(ge=0, le=1024)] = 0  # 0 = decide from the core count
    ollama_url: str = "http://localhost:11434"
    ollama_model: str = "nomic-embed-text"
    ollama_timeout_s: Seconds = 60.0
    # any OpenAI-compatible server (LM Studio, llama-server, vLLM, TEI, Ollama's /v1): its base URL (".../v1"; a bare
    # host gets "/v1") and model name; an API key, when the server needs one, is kept out of this file (api_keys.py)
    openai_url: str = "http://localhost:8080/v1"
    openai_model: str = ""
    openai_timeout_s: Seconds = 60.0
    query_prefix: str = ""  # e5: "query: ", nomic: "search_query: " (pre-filled for known models, embed/prefixes.py)
    document_prefix: str = ""


@dataclass(frozen=True)
class SearchSettings:
    backend: Backend = "hybrid"
    top_k: Annotated[int, msgspec.Meta(ge=1, le=MAX_TOP_K)] = 10
    # "rrf" (weighted Reciprocal Rank Fusion) or "zscore" (standardised lane scores); see retrieve/fusion.py
    fusion: Literal["rrf", "zscore"] = "rrf"
    rrf_k: Annotated[int, msgspec.Meta(ge=1, le=100_000)] = 60  # fusion = "rrf" (the textbook k; docs/BENCHMARKS.md)
    keyword_weight: Weight = 1.0
    dense_weight: Weight = 1.0
    overfetch: Annotated[int, msgspec.Meta(ge=1, le=100)] = 5  # each lane fetches top_k * overfetch, at least 200
    # keyword lane on big libraries: leave out the commonest query terms once their summed document frequency
    # exceeds this many rows (0 = never); below it BM25 is exact. See retrieve/keyword.py.
    keyword_term_budget: NonNegInt = 20000
    # optional second stage (retrieve/rerank.py): a Cohere/Jina-style POST /v1/rerank server reorders the top
    # rerank_depth fused passages; slower than rerank_timeout_s or failing, the fused order stays (with a note)
    rerank: bool = False
    rerank_url: str = "http://localhost:8012/v1/rerank"  # the endpoint, or a base URL ("/v1/rerank" is added)
    rerank_model: str = ""
    rerank_depth: Annotated[int, msgspec.Meta(ge=1, le=1000)] = 30
    rerank_timeout_s: Annotated[float, msgspec.Meta(gt=0, le=600)] = 2.0


@dataclass(frozen=True)
class ContextSettings:
    budget_tokens: Annotated[int, msgspec.Meta(ge=16, le=10_000_000)] = 2048
    # how sources are named in the pasted block and MCP results: relative (to the indexed folder, default),
    # absolute, or name (file name only); see context/paths.py. `search --json` always keeps the absolute path.
    path_style: Literal["relative", "absolute", "name"] = "relative"


@dataclass(frozen=True)
class DesktopSettings:
    # how "Open" shows a hit at its place: a command with {path}, {line}, {page} placeholders, run without a shell
    # (e.g. "code --goto {path}:{line}", "okular --page {page} {path}"); empty = a per-platform default
    # (gui/desktop.py), falling back to the system's default app
    open_with: str = ""  # text, Markdown and code files
    open_pdf_with: str = ""  # PDFs ({page})


@dataclass(frozen=True)
class WatchSettings:
    """Live folders (desktop_memory/watch/): which watches are paused, and how an event storm becomes one update."""

    paused_all: bool = False  # every folder's watch paused
    paused: tuple[str, ...] = ()  # folders whose watch is paused (absolute paths, as in the library)
    # a batch of changes is indexed once no event arrived for this long...
    quiet_ms: Annotated[int, msgspec.Meta(ge=0, le=600_000)] = 300
    # ...or this long after its first event, whichever comes first
    max_wait_ms: Annotated[int, msgspec.Meta(ge=0, le=3_600_000)] = 1500


@dataclass(frozen=True)
class TraySettings:
    """The tray icon and the quick-search popup (gui/shell.py)."""

    close_to_tray: bool = False  # closing the main window keeps the app running in the tray (off: closing quits)


@dataclass(frozen=True)
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
    gui: dict[str, Any] = field(default_factory=dict)  # window geometry, splitter state, last filters (UI-owned)

    def resolved_db_path(self) -> Path:
        return Path(self.db_path).expanduser() if self.db_path else default_db_path()

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Settings:
        """Validate a (possibly partial or older) dict: missing keys take defaults, unknown keys are ignored,
        a wrong type or an out-of-range value raises SettingsError."""
        return validate_settings(data)


class SettingsError(UserError):
    """The settings file cannot be used as it is. ``path`` and ``line`` say where; ``problem`` says what."""

    def __init__(self, path: Path | None, problem: str, line: int | None = None) -> None:
        self.path = path
        self.problem = problem
        self.line = line
        where = f"{path}" + (f", line {line}" if line else "") if path else "settings"
        super().__init__(
            f"The settings file {where} has a problem: {problem}.\n"
            "  Fix it in a text editor, or reset it to the defaults with `desktop-memory settings --reset` "
            "(the broken file is kept beside it as a dated backup). Nothing was changed."
        )


_MSGSPEC_PATH = re.compile(r"^(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)


def validate_settings(data: Any, *, path: Path | None = None, source: str | None = None) -> Settings:
    """Turn parsed TOML into Settings, or raise SettingsError naming the key (and file and line if known)."""
    try:
        settings = msgspec.convert(data, Settings)
    except msgspec.ValidationError as exc:
        m = _MSGSPEC_PATH.match(str(exc))
        what, keypath = (m.group("what"), m.group("path") or "") if m else (str(exc), "")
        keys = [k for k in re.findall(r"\.([A-Za-z0-9_\-]+)|\[\d+\]", keypath) if k]
        line = _find_line(source, keys) if source is not None else None
        raise SettingsError(path, f"{_key_name(keys)}: {_plain(what, data, keys)}", line) from None
    for keys, problem in _cross_field_problems(settings):
        line = _find_line(source, keys) if source is not None else None
        raise SettingsError(path, f"{_key_name(keys)}: {problem}", line)
    return settings


def _cross_field_problems(s: Settings) -> list[tuple[list[str], str]]:
    """Rules that tie fields together (the per-field ranges live in the annotations)."""
    out: list[tuple[list[str], str]] = []
    c = s.chunking
    if c.target_chars > c.max_chars:
        out.append((["chunking", "target_chars"],
                    f"target_chars ({c.target_chars}) must not be larger than max_chars ({c.max_chars})"))
    if c.overlap_chars * 2 > c.target_chars:
        out.append((["chunking", "overlap_chars"],
                    f"overlap_chars ({c.overlap_chars}) must be at most half of target_chars ({c.target_chars})"))
    if c.code_overlap_lines >= c.code_lines:
        out.append((["chunking", "code_overlap_lines"],
                    f"code_overlap_lines ({c.code_overlap_lines}) must be smaller than code_lines ({c.code_lines})"))
    for name in ("keyword_weight", "dense_weight"):
        if not math.isfinite(getattr(s.search, name)):
            out.append((["search", name], "must be a finite number"))
    if any(not p.strip() for p in s.ingest.extra_ignore):
        out.append((["ingest", "extra_ignore"], "patterns cannot be empty strings"))
    import pathspec  # only here: the CLI's start-up does not pay for it

    for pattern in s.ingest.extra_ignore:
        try:
            pathspec.GitIgnoreSpec.from_lines([pattern])
        except ValueError:
            out.append((["ingest", "extra_ignore"], f"{pattern!r} is not a valid pattern (.gitignore syntax)"))
    return out


_TYPE_WORDS = {"int": "a whole number", "float": "a number", "str": "text in quotes", "bool": "true or false",
               "array": "a list like [\"*.log\", \"drafts/\"]", "object": "a [section] of keys"}


def _plain(what: str, data: Any, keys: list[str]) -> str:
    """msgspec's "Expected `int`, got `str`" in words a person reads, with the offending value and choices."""
    value: Any = data
    for k in keys:
        value = value.get(k) if isinstance(value, dict) else None
    allowed = _choices(keys)
    if what.startswith("Invalid enum value") and allowed:
        return f"{value!r} is not one of {', '.join(map(repr, allowed))}"
    m = re.match(r"Expected `(\w+)`, got `\w+`$", what)
    if m:
        return f"expected {_TYPE_WORDS.get(m.group(1), m.group(1))}, got {value!r}"
    text = re.sub(r"`(\w+)`", lambda t: _TYPE_WORDS.get(t.group(1), t.group(1)), what)
    return text[:1].lower() + text[1:] + (f" (got {value!r})" if value is not None else "")


def _choices(keys: list[str]) -> tuple[Any, ...]:
    """The allowed values of a Literal-typed field, read from the dataclass annotations."""
    cls: Any = Settings
    hint: Any = None
    for k in keys:
        if not dataclasses.is_dataclass(cls):
            return ()
        hints = typing.get_type_hints(cls, include_extras=True)
        hint = hints.get(k)
        cls = hint
    while typing.get_origin(hint) is Annotated:
        hint = typing.get_args(hint)[0]
    return typing.get_args(hint) if typing.get_origin(hint) is Literal else ()


def _key_name(keys: list[str]) -> str:
    if not keys:
        return "the file"
    if len(keys) == 1:
        return keys[0]
    return f"[{'.'.join(keys[:-1])}] {keys[-1]}"


def _find_line(source: str | None, keys: list[str]) -> int | None:
    """The 1-based line of ``key`` inside its ``[section]`` in the TOML text (best effort, plain layouts)."""
    if not source or not keys:
        return None
    *sections, key = keys
    section = ".".join(sections)
    current = ""
    header = re.compile(r"^\s*\[\s*([^\]]+?)\s*\]\s*(#.*)?$")
    for number, raw in enumerate(source.splitlines(), start=1):
        m = header.match(raw)
        if m:
            current = m.group(1).strip().strip('"')
            if not sections and current == key:
                return number
            continue
        m = re.match(r"^\s*\"?([A-Za-z0-9_\-]+)\"?\s*=", raw)
        if m and m.group(1) == key and current == section:
            return number
        if m and not section and current == "" and m.group(1) == key:
            return number
    return None


def _drop_none(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _drop_none(v) for k, v in obj.items() if v is not None}
    if isinstance(obj, (list, tuple)):
        return [_drop_none(v) for v in obj]
    return obj


def load_settings(path: Path | None = None) -> Settings:
    """Read settings: a missing file gives defaults; a broken or invalid one raises SettingsError (never silently
    defaults: that would point the app at another database and later overwrite the person's file)."""
    path = path or settings_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Settings()
    except OSError as exc:
        raise SettingsError(path, f"it cannot be read ({exc.strerror or exc})") from None
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SettingsError(path, "it is not UTF-8 text", line) from None
    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc)) or "syntax error"
        raise SettingsError(path, f"it is not valid TOML: {msg}", int(m.group(1)) if m else None) from None
    return validate_settings(data, path=path, source=source)


def check_settings_file(path: Path | None = None) -> SettingsError | None:
    """The problem with the settings file as it is on disk, or None when it is fine (or absent)."""
    try:
        load_settings(path)
    except SettingsError as exc:
        return exc
    return None


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    """Write atomically (temp file + rename) so a crash never leaves a half-written config.

    A file on disk that does not load is never overwritten (the person may be fixing it by hand): SettingsError."""
    path = path or settings_path()
    problem = check_settings_file(path)
    if problem is not None:
        raise problem
    validate_settings(_drop_none(settings.to_dict()))  # never write a file that would not load back
    make_private_dirs(path.parent)  # owner-only: 0700 folder, 0600 file whatever the umask (private_files.py)
    tmp = path.with_suffix(".toml.tmp")
    with open_private(tmp, "wb") as fh:
        tomli_w.dump(_drop_none(settings.to_dict()), fh)
    os.replace(tmp, path)
    return path


def reset_settings(path: Path | None = None) -> Path | None:
    """Move the settings file aside as ``settings.toml.broken-YYYYMMDD-HHMMSS`` (defaults apply from now on).

    Returns the backup's path, or None when there was no file."""
    path = path or settings_path()
    if not path.exists():
        return None
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    backup = path.with_name(f"{path.name}.broken-{stamp}")
    n = 1
    while backup.exists():
        n += 1
        backup = path.with_name(f"{path.name}.broken-{stamp}-{n}")
    os.replace(path, backup)
    return backup
