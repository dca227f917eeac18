"""Plain data types shared by every core layer (no I/O, no Qt).

Offsets: ``char_start``/``char_end`` index into the *extracted* text of the document (for text, Markdown and
code that is the decoded file content; for a PDF it is the page texts joined with "\\n\\f\\n"; for the
document formats (docx, slides, e-books, HTML) it is the text their reader laid out), so
``extracted[char_start:char_end]`` is exactly the passage a chunk came from. Line numbers are 1-based and
inclusive, counted in that same extracted text; they are set only for files a person edits as text (markdown,
text, code): in a PDF or a Word file they would name nothing the person can find. Pages and slides are 1-based.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from typing import Any

# "document": docx/odt/rtf; "slides": pptx/odp (their units are slides); "ebook": epub; "html": web pages
DOC_KINDS: tuple[str, ...] = ("markdown", "text", "code", "pdf", "document", "slides", "ebook", "html")
LINE_KINDS: tuple[str, ...] = ("markdown", "text", "code")  # kinds whose chunks carry line numbers

HEADING_SEP = " › "  # between a breadcrumb's headings: in chunk texts, the chunks.heading_path column, every display


# Document status values stored in the documents table (and a file's outcome in an indexing run).
STATUS_INDEXED = "indexed"  # chunks (and FTS rows) committed; vectors may still be queued
STATUS_SKIPPED = "skipped"  # by policy: binary, too big, no text layer, encrypted ...
STATUS_FAILED = "failed"  # extraction error; ``error`` says why
STATUS_UNCHANGED = "unchanged"  # an indexing run's outcome only: the file was already indexed as it is
# A search result's strength (SearchResult.strength), calibrated by retrieve/strength.py.
STRONG = "strong"
WEAK = "weak"  # probably does not answer the query: left out of the prompt context unless asked for


@dataclass(frozen=True)
class Location:
    """Where a chunk came from inside its file."""

    heading_path: tuple[str, ...] = ()
    page: int | None = None
    line_start: int | None = None
    line_end: int | None = None
    char_start: int = 0
    char_end: int = 0
    slide: int | None = None  # presentations; stored in the page column of a "slides" document

    def describe(self) -> str:
        """Human-readable location: ``Heading › Sub · p. 3 · lines 10–24`` (parts that apply)."""
        parts: list[str] = []
        if self.heading_path:
            parts.append(HEADING_SEP.join(self.heading_path))
        unit = self.unit_label()
        if unit:
            parts.append(unit)
        lines = self.lines_label()
        if lines:
            parts.append(lines)
        return " · ".join(parts)

    def unit_label(self) -> str:
        """"slide 4", "p. 3" or "" (shared by ``describe`` and the context's [Source: ...] line)."""
        if self.slide is not None:
            return f"slide {self.slide}"
        if self.page is not None:
            return f"p. {self.page}"
        return ""

    def lines_label(self) -> str:
        """"lines 10–24"; never for a page or slide (an index from an older version may still hold PDF lines)."""
        if self.line_start is None or self.page is not None or self.slide is not None:
            return ""
        if self.line_end is not None and self.line_end != self.line_start:
            return f"lines {self.line_start}–{self.line_end}"
        return f"line {self.line_start}"

    @property
    def stored_page(self) -> int | None:
        """What goes into the chunks.page column: the page, or the slide of a presentation."""
        return self.page if self.page is not None else self.slide

    @classmethod
    def from_stored(cls, kind: str, *, heading_path: tuple[str, ...], page: int | None, line_start: int | None,
                    line_end: int | None, char_start: int, char_end: int) -> Location:
        """A chunk row back into a Location (the page column holds the slide number for "slides" documents)."""
        if kind == "slides":
            return cls(heading_path, None, line_start, line_end, char_start, char_end, slide=page)
        return cls(heading_path, page, line_start, line_end, char_start, char_end)

    def to_dict(self) -> dict[str, Any]:
        return {
            "heading_path": list(self.heading_path),
            "page": self.page,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "char_start": self.char_start,
            "char_end": self.char_end,
            "slide": self.slide,
            "display": self.describe(),
        }


@dataclass(frozen=True)
class DocHeading:
    """A heading a reader found (Word heading style, h1–h3, chapter title, PDF outline entry).

    ``start:end`` is the heading's own line in the extracted text (left out of chunk bodies: the breadcrumb
    carries it); ``start == end`` marks a position only (a PDF bookmark), nothing is left out.
    """

    level: int  # 1 = top
    title: str
    start: int
    end: int


@dataclass
class ExtractedDoc:
    """A file turned into text by a reader, before chunking."""

    kind: str  # one of DOC_KINDS
    text: str
    # For PDFs: (page_number, char_start, char_end) of each page inside ``text``; for "slides": each slide.
    pages: list[tuple[int, int, int]] | None = None
    language: str | None = None  # for code: "python", "rust", ...
    title: str | None = None  # first heading / PDF title, when known
    warnings: list[str] = field(default_factory=list)  # e.g. "pages 3, 7 have no text layer"
    headings: list[DocHeading] = field(default_factory=list)  # in text order; markdown finds its own


@dataclass
class ChunkDraft:
    """A chunk produced by a chunker, not yet stored.

    ``text`` is what gets indexed and embedded (Markdown chunks carry their heading breadcrumb as a first line);
    ``location.char_start:char_end`` maps back to the extracted text.
    """

    text: str
    location: Location


def chunk_text_hash(text: str) -> bytes:
    """The identity of a chunk's text: blake2b-128 of its exact UTF-8 bytes (what the embedder is given). Stored
    with the chunk and with its vector: a vector belongs to a chunk only when the two are equal."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


@dataclass
class LaneHit:
    """One lane's opinion of a chunk: its 1-based rank in that lane and the lane's raw score. The optional reranker
    (retrieve/rerank.py) adds its verdict as a "rerank" hit: rank among the passages it scored, its own score."""

    rank: int
    score: float  # bm25: higher is better (FTS5 rank negated); dense: cosine in [-1, 1]; rerank: the server's scale


@dataclass
class SearchResult:
    rank: int
    score: float  # fused RRF score (or the single lane's score-derived RRF for single-lane backends)
    chunk_id: int
    doc_id: int
    source: str  # absolute path of the file
    kind: str
    text: str
    location: Location
    lanes: dict[str, LaneHit]
    mtime: float = 0.0
    # match strength, calibrated from what the lanes measured (retrieve/): "strong" or "weak"; weak results are
    # left out of the prompt context by default
    strength: str = STRONG
    # why a result is strong when the question's wording decided it (retrieve/strength.py), e.g. "every word of
    # the question is found only here"; empty otherwise
    strength_reason: str = ""
    # other files holding this same passage (collapsed duplicates), absolute paths
    also_in: list[str] = field(default_factory=list)
    # in SearchOutcome.files (the first screen, one entry per file): chunk ids of this file's other passages that
    # ranked before the last file shown ("+2 more in this file"); empty in the plain passage list otherwise
    more_in_file: list[int] = field(default_factory=list)
    # a shared library (docs/SHARED.md): the readable name of the machine whose library folder holds the file
    # ('' when not recorded), and whether that is another machine (its file cannot be opened here)
    machine: str = ""
    remote: bool = False

    def badges(self) -> list[tuple[str, str]]:
        """(lane, label) per lane that found this chunk, e.g. ("dense", "semantic #1, cos 0.71")."""
        names = {"fts": "keyword", "bm25": "bm25", "dense": "semantic"}
        out = []
        # the lanes in name order, then the reranker's verdict (it came after them): "rerank #1, score 0.93"
        for lane, hit in sorted(self.lanes.items(), key=lambda item: (item[0] == "rerank", item[0])):
            label = f"{names.get(lane, lane)} #{hit.rank}"
            if lane == "dense":
                label += f", cos {hit.score:.2f}"
            elif lane == "rerank":
                label += f", score {hit.score:.2f}"
            out.append((lane, label))
        return out

    def explain(self) -> str:
        """Short badge text, e.g. ``keyword #3 · semantic #1, cos 0.71``, and why the match is strong when the
        question's wording decided it (``… · every word of the question is found only here``)."""
        labels = [label for _, label in self.badges()]
        return " · ".join([*labels, self.strength_reason] if self.strength_reason else labels)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "score": self.score,
            "chunk_id": self.chunk_id,
            "doc_id": self.doc_id,
            "source": self.source,
            "kind": self.kind,
            "text": self.text,
            "location": self.location.to_dict(),
            "lanes": {k: {"rank": v.rank, "score": v.score} for k, v in sorted(self.lanes.items())},
            "why": self.explain(),
            "strength": self.strength,
            "strength_reason": self.strength_reason,
            "also_in": list(self.also_in),
            "more_in_file": list(self.more_in_file),
            "machine": self.machine,
        }


@dataclass
class SearchFilters:
    """Filters applied inside the lanes (so top-k is not lost to post-filtering)."""

    path_prefix: str | None = None  # an absolute folder (or file): it and what is below it (paths.is_inside)
    path_glob: str | None = None  # fnmatch-style glob on the absolute path, e.g. "*/notes/*.md"
    kinds: tuple[str, ...] = ()  # subset of DOC_KINDS; empty = all
    modified_since: float | None = None  # unix seconds
    modified_until: float | None = None
    # files and folders left out: an interrupted removal's paths (service.search_outcome), so what it still holds
    # neither takes a result's place in the top-k nor adds to a note about results nobody is shown
    exclude_paths: tuple[str, ...] = ()

    def is_empty(self) -> bool:
        return not (self.path_prefix or self.path_glob or self.kinds or self.modified_since or self.modified_until
                    or self.exclude_paths)


@dataclass
class FileOutcome:
    path: str
    status: str  # "indexed" | "unchanged" | "skipped" | "failed" | "removed"
    reason: str = ""
    chunks: int = 0


@dataclass
class IndexProgress:
    """Progress callback payload. Phases: scan → extract (keyword-searchable) → embed (semantic) → done."""

    phase: str
    files_total: int = 0
    files_done: int = 0
    current: str = ""
    chunks_written: int = 0
    chunks_to_embed: int = 0
    chunks_embedded: int = 0
    elapsed_s: float = 0.0
    chunks_per_s: float = 0.0  # embedding throughput
    eta_s: float | None = None
    last_outcome: FileOutcome | None = None


@dataclass
class IndexSummary:
    indexed: int = 0
    unchanged: int = 0
    skipped: int = 0
    failed: int = 0
    removed: int = 0
    chunks_added: int = 0
    chunks_embedded: int = 0
    vectors_reused: int = 0  # unchanged chunks of edited files that kept their vectors (not re-embedded)
    duplicates_collapsed: int = 0
    cancelled: bool = False
    elapsed_s: float = 0.0
    extract_s: float = 0.0
    embed_s: float = 0.0
    store_s: float = 0.0
    embed_error: str = ""  # set when vectors could not be made (keyword search still works)
    outcomes: list[FileOutcome] = field(default_factory=list)
    # removal is final (issue 30): paths the person removed from inside a library folder that this run left out,
    # and those it included again because the person named them explicitly (store/folders.py)
    excluded: list[str] = field(default_factory=list)
    included_again: list[str] = field(default_factory=list)

    def problems(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.status in (STATUS_SKIPPED, STATUS_FAILED)]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class DocumentInfo:
    id: int
    path: str
    kind: str
    status: str
    error: str
    size: int
    mtime: float
    indexed_at: float
    chunks: int
    vectors: int


@dataclass
class StoredPassage:
    """One passage as stored, found again by its id (the MCP server's ``get_passage``; store/passages.py)."""

    chunk_id: int
    doc_id: int
    ord: int  # position of the chunk in its file (0-based)
    source: str  # absolute path of the file
    kind: str
    text: str  # the stored chunk text (Markdown chunks start with their heading breadcrumb)
    location: Location
    mtime: float


@dataclass
class PassageWithNeighbours:
    passage: StoredPassage
    before: list[StoredPassage] = field(default_factory=list)  # nearest last
    after: list[StoredPassage] = field(default_factory=list)  # nearest first
    chunks_in_file: int = 0


@dataclass
class Stats:
    documents: dict[str, int]  # by status
    chunks: int
    vectors: int
    pending_vectors: int
    db_path: str
    db_bytes: int
    model_id: str | None
    dim: int | None
    duplicates: int = 0  # chunks collapsed onto an identical passage: they share its vector and have none of their own
    excluded: list[str] = field(default_factory=list)  # paths removed from inside a library folder (kept out)
    # the models whose vectors this library holds (store/model_sets.py), the active one first
    models: list[ModelVectors] = field(default_factory=list)
    configured_model: str | None = None  # the embedder the settings name (global; vectors are per library)
    search_model: str | None = None  # the model semantic search embeds queries with here (None: semantic off)
    model_note: str = ""  # the mismatch between the two, in one plain sentence ("" when they agree)
    # an interrupted removal (its paths, and its documents still in the file, counted above): not searchable or
    # listed, finished by the next command that writes
    removing: list[str] = field(default_factory=list)
    removing_documents: int = 0

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class ModelVectors:
    """One model's vectors in a library, as ``stats`` shows them."""

    model_id: str
    dim: int
    vectors: int
    bytes: int  # about how much of the file they take
    active: bool  # the set semantic search uses
    missing: int = 0  # live passages without a vector of this model (a set being built, or kept from before)


@dataclass
class ContextItem:
    rank: int
    source: str
    location: Location
    header: str  # the "[Source: ...]" line
    text: str
    tokens: int
    chunk_id: int
    shown_source: str = ""  # the source as the [Source: ...] line names it (context/paths.py path style)


@dataclass
class ContextReport:
    text: str
    tokens_used: int
    budget: int
    items: list[ContextItem]
    dropped: list[ContextItem]

    def to_dict(self) -> dict[str, Any]:
        def item(i: ContextItem) -> dict[str, Any]:
            return {
                "rank": i.rank,
                "source": i.source,
                "location": i.location.to_dict(),
                "header": i.header,
                "tokens": i.tokens,
                "chunk_id": i.chunk_id,
            }

        return {
            "text": self.text,
            "tokens_used": self.tokens_used,
            "budget": self.budget,
            "items": [item(i) for i in self.items],
            "dropped": [item(i) for i in self.dropped],
        }



@dataclass(frozen=True)
class LibraryQuery:
    """How the Library lists documents: a filter (substring of path, status or reason), problems only, and the
    sort column (a key's name in ``library_listing.SORT_KEYS``) and direction. Frozen: a listing carries the query
    it answers, so a late answer to an older query is recognised and dropped."""

    needle: str = ""
    problems_only: bool = False
    sort: str = "name"
    descending: bool = False


@dataclass
class FolderSummary:
    """One folder of the Library (the documents directly in it, not in its subfolders), from one aggregate row.

    ``key`` is the folder as the store groups it (the path up to and including its last separator); ``path`` is
    the folder as people read it (``os.path.dirname`` of its files)."""

    key: str
    path: str
    files: int
    failed: int
    skipped: int
    chunks: int
    vectors: int  # -1: not counted (a long embedding is under way; see store/doc_listing.py)
    size: int
    mtime: float
    indexed_at: float


@dataclass
class LibraryListing:
    """What the Library shows at once: every folder's summary (matching the query), the first rows of the folders
    asked for (``files``: folder key → documents in the query's order), and the library's document count."""

    query: LibraryQuery
    folders: list[FolderSummary]
    files: dict[str, list[DocumentInfo]]
    total_documents: int
    complete: bool = False  # every document and folder, unfiltered (a small library): filter and sort need no query
    excluded: list[str] = field(default_factory=list)  # paths removed from inside a library folder ("Include again")
    machines: dict[str, str] = field(default_factory=dict)  # another machine's library folder → its name (shared)
    roots: list[str] = field(default_factory=list)  # every library folder: the Library's top rows are what was added
