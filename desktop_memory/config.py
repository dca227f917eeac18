"""One typed, validated Settings model, persisted as TOML in the user's config dir. Every default path is decided here.

The dataclasses are frozen: a Settings value never changes under a reader (the service, a worker thread); code that
wants other settings builds new ones with ``dataclasses.replace``. Each field also carries what a person sees of it
(``ui(title, help, **hints)``, stored in msgspec.Meta's title/description/extra) and each section its page title
(``@page``): the Settings dialog is generated from these (settings_schema.py, gui/settings/), so a new field gets its
widget, range and help text with no GUI code. A settings file is validated on load by msgspec,
driven by the field annotations below (types, and ranges declared next to each field with ``msgspec.Meta``), so a
field added later is checked without any extra code; the few rules that tie two fields together are in
``_cross_field_problems``. A file that does not parse or does not validate raises SettingsError naming the key, the
file and the line; it is never replaced by defaults silently, and ``save_settings`` refuses to overwrite it.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
import platformdirs

from . import APP_NAME
from .library_location import Location, env_location, parse_location, shown

ENV_CONFIG_DIR = "DESKTOP_MEMORY_CONFIG_DIR"  # tests and portable installs point this elsewhere
ENV_DATA_DIR = "DESKTOP_MEMORY_DATA_DIR"

Backend = Literal["hybrid", "keyword", "bm25", "dense"]
BACKENDS: tuple[Backend, ...] = ("hybrid", "keyword", "bm25", "dense")
SEMANTIC_BACKENDS: tuple[Backend, ...] = ("hybrid", "dense")  # the backends with a semantic (dense) lane
EMBEDDERS = ("local", "ollama", "openai")
Theme = Literal["system", "light", "dark"]
THEMES: tuple[Theme, ...] = ("system", "light", "dark")
MAX_TOP_K = 1000  # results a search may return (settings, CLI and the service share it)

# Value types with their ranges, declared once and used next to the fields.
Chars = Annotated[int, msgspec.Meta(ge=100, le=100_000)]
NonNegInt = Annotated[int, msgspec.Meta(ge=0, le=1_000_000_000)]
Seconds = Annotated[float, msgspec.Meta(gt=0, le=86_400)]
Weight = Annotated[float, msgspec.Meta(ge=0, le=1000)]
EmbedderKind = Literal["local", "ollama", "openai", "hash"]
# A model server's address: checked by url_problem wherever it enters (settings file, Settings dialog, CLI),
# whenever the field is in use (its ``when`` hint holds): settings_file._field_rule_problems reads this mark.
HttpUrl = Annotated[str, msgspec.Meta(extra={"check": "url"})]
MAX_URL_CHARS = 2048


def char_name(c: str) -> str:
    """A character named so a person can find it without seeing it: "the invisible character U+200B (ZERO WIDTH
    SPACE)", "the control character U+0009", "a line break", "the non-ASCII character U+00E9 (…)"."""
    import unicodedata

    if c in "\r\n":
        return "a line break"
    name = unicodedata.name(c, "")
    label = f"U+{ord(c):04X}" + (f" ({name})" if name else "")
    if unicodedata.category(c) == "Cc":
        return f"the control character {label}"
    if not c.isprintable() or c.isspace():
        return f"the invisible character {label}"
    return f"the non-ASCII character {label}"


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a model server's address (in words, for "'<url>' is not ... (<why>)"), or None.

    Checked where a URL enters, so that none reaches an HTTP client half-valid: ``http://[::1`` made urlsplit raise
    ValueError deep inside every hybrid search. The value is judged as stored (no stripping: a space is refused)."""
    from urllib.parse import urlsplit

    if not url:
        return "it is empty"
    if len(url) > MAX_URL_CHARS:
        return f"it is longer than {MAX_URL_CHARS:,} characters"
    bad = next((c for c in url if c.isspace() or not c.isprintable()), None)
    if bad is not None:
        return "it contains a space" if bad == " " else f"it contains {char_name(bad)}"
    try:
        parts = urlsplit(url)
        port = parts.port  # raises ValueError for a port that is not a number from 0 to 65535
        host = parts.hostname
    except ValueError as exc:
        return f"it does not parse: {exc}"
    if parts.scheme not in ("http", "https"):
        return "it must start with http:// or https://" if "://" not in url else \
            f"the scheme {parts.scheme}:// is not http:// or https://"
    if not host:
        return "it names no server"
    if port == 0:
        return "port 0 is not a port a server listens on"
    if parts.fragment or url.endswith("#"):
        return "it has a #fragment"
    return None


def ui(title: str, help: str = "", **hints: Any) -> msgspec.Meta:
    """What the Settings dialog shows for a field: its label, its help (tooltip), and optional hints:
    ``unit`` (suffix), ``step``, ``special`` ({value: label}, e.g. {0: "automatic"}), ``labels`` ({choice: label}),
    ``hidden_choices`` (offered only when already chosen), ``placeholder``, ``browse`` ("dir" or "file"),
    ``when`` ({sibling field: [values]}: editable only then), ``group`` (a box inside the page), ``decimals``,
    ``widget="hidden"`` (state the window keeps itself). Ranges stay in their own msgspec.Meta (ge/le/gt/lt)."""
    return msgspec.Meta(title=title, description=help, extra=hints)


def page(title: str, note: str = "", order: int = 100) -> Any:
    """Name a settings section's page in the Settings dialog (``note``: a line under its fields)."""

    def mark(cls: Any) -> Any:
        cls.__settings_page__ = (title, note, order)
        return cls

    return mark


def config_dir() -> Path:
    return _env_dir(ENV_CONFIG_DIR) or Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def data_dir() -> Path:
    return _env_dir(ENV_DATA_DIR) or Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def _env_dir(name: str) -> Path | None:
    """The folder an environment variable names, "~" expanded (an MCP client's JSON config passes it unexpanded:
    ``"~/memory"`` made a folder named "~" in whatever folder the client started the server in); surrounding
    white space is dropped; empty means unset."""
    value = os.environ.get(name, "").strip()
    return Path(value).expanduser() if value else None


def default_db_path() -> Path:
    return data_dir() / "memory.db"


def settings_path() -> Path:
    return config_dir() / "settings.toml"


@page("Chunking", "Chunking changes apply to files indexed from now on; re-index a folder to apply them to it.",
      order=40)
@dataclass(frozen=True)
class ChunkSettings:
    """Chunk sizes in characters. MiniLM reads at most 256 tokens (≈ 1,100 chars of prose) and was trained on 128;
    the 800-char target was chosen by measurement on SciFact train: the best fused ranking of the sizes tried, for a
    little more to embed (docs/BENCHMARKS.md, "Chunk size")."""

    target_chars: Annotated[Chars, ui(
        "Passage size", "The size a passage (chunk) aims for, in characters. Smaller passages are more precise, "
        "larger ones carry more context. At most Longest passage.", unit=" chars", step=50)] = 800
    max_chars: Annotated[Chars, ui(  # hard cap (≈ the model's 256 tokens), the safety net for code/URLs
        "Longest passage (hard limit)", "No passage is ever longer than this (chunk hard limit): the safety net "
        "for very long lines such as minified code. Keep it near what the model reads (about 1,100 characters).",
        unit=" chars", step=50)] = 1100
    overlap_chars: Annotated[int, msgspec.Meta(ge=0, le=50_000), ui(
        "Overlap between passages", "Characters repeated between neighbouring passages, so a sentence cut at a "
        "boundary is still found whole in one of them. At most half of Passage size.", unit=" chars", step=10)] = 150
    code_lines: Annotated[int, msgspec.Meta(ge=1, le=10_000), ui(
        "Code passage", "Lines per passage for source code.", unit=" lines", step=5)] = 40
    code_overlap_lines: Annotated[int, msgspec.Meta(ge=0, le=10_000), ui(
        "Code overlap", "Lines repeated between neighbouring code passages; fewer than Code passage.",
        unit=" lines")] = 5


@page("Indexing", "Which files are read, and how PDFs are read.", order=50)
@dataclass(frozen=True)
class IngestSettings:
    max_file_mb: Annotated[float, msgspec.Meta(gt=0, le=1_000_000), ui(
        "Skip files larger than", "Files larger than this are skipped (listed in the Library with the reason).",
        unit=" MB", step=5)] = 50.0
    pdf_timeout_s: Annotated[Seconds, ui(
        "PDF time limit", "A PDF whose text takes longer than this to read is stopped and listed as failed "
        "(a broken or hostile file cannot hang indexing).", unit=" s", step=10)] = 120.0
    pdf_max_memory_mb: Annotated[int, msgspec.Meta(ge=64, le=1_000_000), ui(
        "PDF memory limit", "The most memory the separate PDF reader may use before it is stopped.",
        unit=" MB", step=256)] = 1536
    pdf_engine: Annotated[Literal["auto", "pdfium", "pdfplumber"], ui(  # "auto": PDFium, then pdfplumber
        "PDF reader", "Which library reads PDF text. Automatic: PDFium, then pdfplumber for a file PDFium finds "
        "no text in.", labels={"auto": "Automatic (PDFium, then pdfplumber)", "pdfium": "PDFium",
                               "pdfplumber": "pdfplumber"})] = "auto"
    ocr: Annotated[bool, ui(  # image-only PDF pages → text, with the optional "ocr" extra (slow: seconds per page)
        "Read scanned PDF pages (OCR)", "Image-only PDF pages are turned into text with OCR (needs the optional "
        "OCR component; slow: seconds per page).")] = False
    follow_symlinks: Annotated[bool, ui(
        "Follow symbolic links", "Index what symbolic links inside indexed folders point to.")] = False
    # Patterns to leave out, gitignore syntax, relative to each indexed folder ("*.log", "docs/drafts/", "/TODO.md").
    extra_ignore: Annotated[tuple[str, ...], ui(
        "Also ignore", "Extra patterns to skip, one per line, in .gitignore syntax relative to each indexed "
        "folder (e.g. *.log, drafts/, docs/*.md).", placeholder="*.log\ndrafts/")] = ()
    use_ignore_files: Annotated[bool, ui(  # honour .gitignore and .dmignore files inside indexed folders
        "Honour .gitignore and .dmignore", "Files that a .gitignore or .dmignore inside an indexed folder "
        "excludes are skipped.")] = True


_OLLAMA = {"kind": ["ollama"]}
_OPENAI = {"kind": ["openai"]}


@page("Embedder", "Changing the model or the document prefix re-embeds the library in the background (a query "
      "prefix does not). Keyword search keeps working meanwhile; two kinds of vectors are never mixed in one index.",
      order=10)
@dataclass(frozen=True)
class EmbedderSettings:
    kind: Annotated[EmbedderKind, ui(  # "hash": a meaningless test-only fake (tests, benchmarks)
        "Embedding model", "Which model turns passages into vectors for semantic search.",
        labels={"local": "Local model (runs on this computer, nothing leaves it)", "ollama": "Ollama server",
                "openai": "OpenAI-compatible server (LM Studio, llama-server, vLLM, TEI …)",
                "hash": "Hash (test-only, meaningless)"}, hidden_choices=["hash"], widget="radio")] = "local"
    local_model_dir: Annotated[str, ui(  # empty = the bundled all-MiniLM-L6-v2 int8
        "Model folder", "A folder with an ONNX sentence-embedding model. Empty: the bundled all-MiniLM-L6-v2 "
        "(int8).", placeholder="bundled all-MiniLM-L6-v2 (int8)", browse="dir", group="Local model",
        when={"kind": ["local"]})] = ""
    # where the model's input is cut (MiniLM's limit; 128 measured worse, docs/BENCHMARKS.md)
    max_tokens: Annotated[int, msgspec.Meta(ge=8, le=8192), ui(
        "Longest input", "Where a passage is cut before the model reads it, in tokens (MiniLM reads 256).",
        unit=" tokens", group="Local model", when={"kind": ["local"]})] = 256
    threads: Annotated[int, msgspec.Meta(ge=0, le=1024), ui(  # 0 = decide from the core count
        "Threads", "CPU threads for the local model; automatic uses the cores you have.",
        special={0: "automatic"}, group="Local model", when={"kind": ["local"]})] = 0
    ollama_url: Annotated[HttpUrl, ui(
        "Base URL", "Where the Ollama server listens; it must be running (ollama serve).",
        placeholder="http://localhost:11434", group="Ollama server", when=_OLLAMA)] = "http://localhost:11434"
    ollama_model: Annotated[str, ui(
        "Model", "An embedding model pulled into Ollama (ollama pull nomic-embed-text). Test connection lists the "
        "models the server has.", group="Ollama server", when=_OLLAMA)] = "nomic-embed-text"
    ollama_timeout_s: Annotated[Seconds, ui(
        "Time limit", "How long to wait for the Ollama server's answer.", unit=" s", step=10,
        group="Ollama server", when=_OLLAMA)] = 60.0
    # any OpenAI-compatible server (LM Studio, llama-server, vLLM, TEI, Ollama's /v1): its base URL (".../v1"; a bare
    # host gets "/v1") and model name; an API key, when the server needs one, is kept out of this file (api_keys.py)
    openai_url: Annotated[HttpUrl, ui(
        "Base URL", "The server's OpenAI-compatible address, usually ending in /v1 (LM Studio: "
        "http://localhost:1234/v1, llama-server: http://localhost:8080/v1, vLLM: http://localhost:8000/v1, "
        "Ollama: http://localhost:11434/v1). An API key, if the server needs one, is kept in the system keyring "
        "or an owner-only file, never in this settings file.", placeholder="http://localhost:8080/v1",
        group="OpenAI-compatible server", when=_OPENAI)] = "http://localhost:8080/v1"
    openai_model: Annotated[str, ui(
        "Model", "The embedding model's name on the server. Test connection lists the models it serves; known "
        "models (e5, nomic-embed-text, bge) fill in their query/document prefixes.", placeholder="e.g. "
        "nomic-embed-text-v1.5", group="OpenAI-compatible server", when=_OPENAI)] = ""
    openai_timeout_s: Annotated[Seconds, ui(
        "Time limit", "How long to wait for the server's answer to one batch.", unit=" s", step=10,
        group="OpenAI-compatible server", when=_OPENAI)] = 60.0
    batch_size: Annotated[int, msgspec.Meta(ge=1, le=4096), ui(  # rows per model call, at most...
        "Batch size", "How many passages are embedded per model call. Larger batches are a little faster and use "
        "more memory.", group="Both")] = 32
    batch_tokens: Annotated[NonNegInt, ui(  # ...and at most this many padded tokens (0 = no limit)
        "Batch token limit", "At most this many (padded) tokens per model call: caps the memory a batch of long "
        "passages takes.", unit=" tokens", step=256, special={0: "no limit"}, group="Both")] = 1024
    # (as fast as 32-row batches at a third of the peak memory: docs/BENCHMARKS.md, "Indexing: where the time goes")
    query_prefix: Annotated[str, ui(
        "Query prefix", "Text put before every search query before embedding. Some models expect one "
        "(e5: \"query: \", nomic-embed-text: \"search_query: \"), filled in for known models; MiniLM needs none.",
        placeholder='e.g. "search_query: " for nomic-embed-text', group="Both")] = ""
    document_prefix: Annotated[str, ui(
        "Document prefix", "Text put before every passage before embedding (nomic-embed-text: "
        "\"search_document: \"). Changing it re-embeds the library.", placeholder='e.g. "search_document: "',
        group="Both")] = ""


@page("Search", "Hover over a setting for what it does. Keyword (FTS5) and BM25 score the same words two ways; "
      "Hybrid adds meaning-based search on top.", order=20)
@dataclass(frozen=True)
class SearchSettings:
    backend: Annotated[Backend, ui(
        "Default backend", "How results are found. Hybrid: keyword matches and meaning-based (semantic) matches "
        "merged; the best default. Keyword (FTS5): SQLite's full-text index, exact words (and word forms), fast. "
        "BM25: the same keyword scoring computed in Python, for comparison. Semantic only: by meaning, finds "
        "passages that use other words.", labels={"hybrid": "Hybrid (keyword + semantic)",
                                                  "keyword": "Keyword (FTS5)", "bm25": "BM25",
                                                  "dense": "Semantic only"})] = "hybrid"
    top_k: Annotated[int, msgspec.Meta(ge=1, le=MAX_TOP_K), ui(
        "Results shown (top-k)", "How many results a search shows (top-k). More results fill more of the prompt "
        "context.")] = 10
    # "rrf" (weighted Reciprocal Rank Fusion) or "zscore" (standardised lane scores); see retrieve/fusion.py
    fusion: Annotated[Literal["rrf", "zscore"], ui(
        "Rank merging", "How Hybrid merges the keyword and semantic rankings: Reciprocal Rank Fusion (by rank) or "
        "standardised scores.", labels={"rrf": "Reciprocal Rank Fusion", "zscore": "Standardised scores"})] = "rrf"
    rrf_k: Annotated[int, msgspec.Meta(ge=1, le=100_000), ui(  # fusion = "rrf" (the textbook k)
        "RRF k", "Reciprocal Rank Fusion constant: how the two rankings are merged. Small values trust each "
        "ranking's top few results more; large values even things out. 60 is the textbook default.",
        when={"fusion": ["rrf"]})] = 60
    keyword_weight: Annotated[Weight, ui(
        "Keyword weight (hybrid)", "In Hybrid search, how much the keyword ranking counts against the semantic "
        "one. Raise it if exact words (names, error messages) matter most to you.", step=0.1)] = 1.0
    dense_weight: Annotated[Weight, ui(
        "Semantic weight (hybrid)", "In Hybrid search, how much the semantic (meaning) ranking counts. Raise it "
        "for questions asked in your own words.", step=0.1)] = 1.0
    overfetch: Annotated[int, msgspec.Meta(ge=1, le=100), ui(  # each lane fetches top_k * overfetch, at least 200
        "Candidates per lane", "Each lane fetches this many times top-k candidates (at least 200) before they are "
        "merged.", unit=" × top-k")] = 5
    # keyword lane on big libraries: leave out the commonest query terms once their summed document frequency
    # exceeds this many rows (0 = never); below it BM25 is exact. See retrieve/keyword.py.
    keyword_term_budget: Annotated[NonNegInt, ui(
        "Common-word limit", "On big libraries the keyword lane leaves out the commonest query words once they "
        "match more than this many passages together; below it keyword scores are exact.", unit=" rows",
        step=1000, special={0: "never"})] = 20000
    # optional second stage (retrieve/rerank.py): a Cohere/Jina-style POST /v1/rerank server reorders the top
    # rerank_depth fused passages; slower than rerank_timeout_s or failing, the fused order stays (with a note)
    rerank: Annotated[bool, ui(
        "Rerank the top results", "Send the best passages to a reranking server (llama-server --reranking, vLLM, "
        "TEI, Infinity) and show them in its order. If the server is slow or down, the usual order is kept and "
        "the search says so.", group="Rerank")] = False
    rerank_url: Annotated[HttpUrl, ui(  # the endpoint, or a base URL ("/v1/rerank" is added)
        "Rerank URL", "The server's rerank endpoint (…/v1/rerank, TEI: …/rerank), or just its address.",
        placeholder="http://localhost:8012/v1/rerank", group="Rerank",
        when={"rerank": [True]})] = "http://localhost:8012/v1/rerank"
    rerank_model: Annotated[str, ui(
        "Rerank model", "The reranking model's name on the server (some servers ignore it).",
        placeholder="e.g. bge-reranker-v2-m3", group="Rerank", when={"rerank": [True]})] = ""
    rerank_depth: Annotated[int, msgspec.Meta(ge=1, le=1000), ui(
        "Passages reranked", "How many of the top results the reranker reorders; the rest keep their place.",
        group="Rerank", when={"rerank": [True]})] = 30
    rerank_timeout_s: Annotated[float, msgspec.Meta(gt=0, le=600), ui(
        "Rerank time limit", "Past this, the search shows the usual order instead of waiting.", unit=" s",
        step=0.5, decimals=1, group="Rerank", when={"rerank": [True]})] = 2.0


@page("Context", "The block that Copy context puts on the clipboard.", order=30)
@dataclass(frozen=True)
class ContextSettings:
    budget_tokens: Annotated[int, msgspec.Meta(ge=16, le=10_000_000), ui(
        "Context token budget", "The largest prompt context to build, in tokens (about ¾ of a word each). "
        "Passages are added in rank order until the next one would not fit.", unit=" tokens", step=256)] = 2048
    # how sources are named in the pasted block and MCP results: relative (to the indexed folder, default),
    # absolute, or name (file name only); see context/paths.py. `search --json` always keeps the absolute path.
    path_style: Annotated[Literal["relative", "absolute", "name"], ui(
        "Paths in copied context", "How each passage's [Source: …] line names its file in the copied context. "
        "Relative keeps your user name and folder layout out of a chat; search --json always has the full path.",
        labels={"relative": "Relative to the indexed folder (notes/plan.md)",
                "absolute": "Absolute path (/home/you/notes/plan.md)", "name": "File name only (plan.md)"})
    ] = "relative"


@page("Opening files", "{path}, {line} and {page} are filled in; no shell is involved.", order=60)
@dataclass(frozen=True)
class DesktopSettings:
    # how "Open" shows a hit at its place: a command with {path}, {line}, {page} placeholders, run without a shell
    # (e.g. "code --goto {path}:{line}", "okular --page {page} {path}"); empty = a per-platform default
    # (gui/desktop.py), falling back to the system's default app
    open_with: Annotated[str, ui(  # text, Markdown and code files
        "Open text at line with", "Command that opens a text, Markdown or code result at its line; {path}, {line} "
        "and {page} are filled in, no shell is involved. Empty: a known editor on your PATH (VS Code, Sublime, "
        "Kate, gedit), else the default app.", placeholder="e.g. code --goto {path}:{line}   (empty: automatic)")
    ] = ""
    open_pdf_with: Annotated[str, ui(  # PDFs ({page})
        "Open PDFs at page with", "Command that opens a PDF result at its page, e.g. okular --page {page} {path}. "
        "Empty: a known viewer on your PATH (Okular, Evince, Zathura, SumatraPDF), else the default app.",
        placeholder="e.g. okular --page {page} {path}   (empty: automatic)")] = ""


@page("Live folders", "Indexed folders are watched; a burst of changes becomes one update.", order=70)
@dataclass(frozen=True)
class WatchSettings:
    """Live folders (desktop_memory/watch/): which watches are paused, and how an event storm becomes one update."""

    paused_all: Annotated[bool, ui("Pause every watch", widget="hidden")] = False  # the Library's menu keeps it
    paused: Annotated[tuple[str, ...], ui(  # folders whose watch is paused (absolute paths, as in the library)
        "Paused folders", widget="hidden")] = ()
    # a batch of changes is indexed once no event arrived for this long...
    quiet_ms: Annotated[int, msgspec.Meta(ge=0, le=600_000), ui(
        "Quiet time", "Changes are indexed once no new change arrived for this long.", unit=" ms", step=100)] = 300
    # ...or this long after its first event, whichever comes first
    max_wait_ms: Annotated[int, msgspec.Meta(ge=0, le=3_600_000), ui(
        "Longest wait", "...or this long after the first change, whichever comes first.", unit=" ms",
        step=500)] = 1500


@page("Tray", order=80)
@dataclass(frozen=True)
class TraySettings:
    """The tray icon and the quick-search popup (gui/desktop_integration.py)."""

    close_to_tray: Annotated[bool, ui(  # closing the main window keeps the app running in the tray
        "Closing the window keeps the app in the tray", "Closing the main window keeps the app running in the "
        "tray, with the quick-search shortcut; off: closing quits.")] = False


@page("Appearance", order=90)
@dataclass(frozen=True)
class AppearanceSettings:
    """How the window looks (was the untyped ``gui.theme`` entry; old files are migrated on load)."""

    theme: Annotated[Theme, ui(
        "Theme", "System follows the desktop's light or dark setting.",
        labels={"system": "System", "light": "Light", "dark": "Dark"})] = "system"


@page("Library", "A new location opens (or creates) that database; the old file is left where it is.", order=0)
@dataclass(frozen=True)
class Settings:
    db_path: Annotated[str, ui(  # empty = default_db_path()
        "Database file", "The SQLite file that holds the library. Empty: the default location.",
        browse="file")] = ""
    # a shared PostgreSQL library (docs/SHARED.md); set, it is the library instead of the file above. Never with a
    # password: that is refused here (library_location.url_problem) and kept in PGPASSWORD, ~/.pgpass or the keyring
    db_url: Annotated[str, ui(
        "Shared library (PostgreSQL)", "A postgresql://user@host/dbname address of a library shared with other "
        "machines (docs/SHARED.md); TLS settings such as ?sslmode=verify-full are honoured. Never a password here: "
        "it goes in PGPASSWORD, ~/.pgpass or the API-key store. Empty: the database file above.",
        placeholder="postgresql://me@server/memory?sslmode=verify-full")] = ""
    # how results from this machine are named on the others' screens ("desktop: notes/plan.md"); empty: host name
    machine_name: Annotated[str, msgspec.Meta(max_length=100), ui(
        "This machine's name", "How this computer's folders and results are named on other machines sharing the "
        "library. Empty: the host name.", placeholder="the host name")] = ""
    chunking: ChunkSettings = field(default_factory=ChunkSettings)
    ingest: IngestSettings = field(default_factory=IngestSettings)
    embedder: EmbedderSettings = field(default_factory=EmbedderSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    context: ContextSettings = field(default_factory=ContextSettings)
    desktop: DesktopSettings = field(default_factory=DesktopSettings)
    watch: WatchSettings = field(default_factory=WatchSettings)
    tray: TraySettings = field(default_factory=TraySettings)
    appearance: AppearanceSettings = field(default_factory=AppearanceSettings)
    # window geometry, splitter state, last filters (UI-owned)
    gui: Annotated[dict[str, Any], ui("Window state", widget="hidden")] = field(default_factory=dict)

    def resolved_db_path(self) -> Path:
        return Path(self.db_path).expanduser() if self.db_path else default_db_path()

    def resolved_db_location(self) -> Location:
        """The library to open when no --db is given: ``DESKTOP_MEMORY_DB`` (a path or a URL), else the shared
        library's URL, else the database file (library_location.py). ValueError for an unusable value."""
        from_env = env_location()
        if from_env is not None:
            return from_env
        if self.db_url.strip():
            return parse_location(self.db_url, in_settings=True)
        return self.resolved_db_path()

    def library_shown(self) -> str:
        """The library as a message names it: its file, or its server's URL without a password; never raises."""
        try:
            return shown(self.resolved_db_location())
        except ValueError:
            return shown(self.db_url.strip()) if self.db_url.strip() else str(self.resolved_db_path())

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
