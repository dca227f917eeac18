"""The structured content of each tool's result (pydantic models: the SDK publishes them as output schemas and
checks every result against them). The plain text next to it says the same for a model reading it."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..models import Location


class Where(BaseModel):
    """Where a passage sits in its file."""

    display: str = Field(description="heading path · page · lines, as one readable string ('' if nothing applies)")
    heading_path: list[str] = Field(description="Markdown headings above the passage, outermost first")
    page: int | None = Field(description="1-based PDF page")
    line_start: int | None = Field(description="first line (1-based) in the extracted text")
    line_end: int | None = Field(description="last line (inclusive)")

    @classmethod
    def of(cls, loc: Location) -> Where:
        return cls(display=loc.describe(), heading_path=list(loc.heading_path), page=loc.page,
                   line_start=loc.line_start, line_end=loc.line_end)


class LaneRank(BaseModel):
    rank: int = Field(description="1-based rank of the passage in this retrieval lane")
    score: float = Field(description="the lane's own score: BM25 (higher is better) or cosine similarity")


class Hit(BaseModel):
    rank: int
    id: int = Field(description="passage id: pass it to get_passage")
    source: str = Field(description="the file, shown in the configured path style (relative by default)")
    kind: str = Field(description="markdown, text, code, pdf, document (Word/ODF/RTF), slides, ebook or html")
    location: Where
    strength: str = Field(description="'strong' or 'weak' match, calibrated from what the lanes measured")
    why: str = Field(description="which lanes found it and how high, e.g. 'keyword #3 · semantic #1, cos 0.71'")
    lanes: dict[str, LaneRank]
    score: float = Field(description="fused ranking score (only meaningful relative to the other results)")
    also_in: list[str] = Field(description="other files holding this same passage")
    text: str = Field(description="the passage text")
    machine: str = Field("", description="the machine whose library folder holds the file (a shared library: "
                         "another machine's file cannot be opened here)")


class SearchOut(BaseModel):
    query: str
    backend: str
    results: list[Hit]
    weak: bool = Field(description="true when no result is a strong match")
    notes: list[str] = Field(description="e.g. why the semantic lane was off")


class ContextPart(BaseModel):
    rank: int
    id: int
    header: str = Field(description="the [Source: …] line introducing the passage in the block")
    tokens: int
    reason: str = Field(description="for a left-out passage: why ('over budget' or 'weak match'); '' otherwise")


class ContextOut(BaseModel):
    query: str
    text: str = Field(description="the context block: passages in rank order, each under its [Source: …] line")
    tokens_used: int = Field(description="estimated tokens of the block")
    budget: int
    included: list[ContextPart]
    left_out: list[ContextPart]
    notes: list[str]


class Piece(BaseModel):
    id: int
    location: Where
    text: str


class PassageOut(BaseModel):
    id: int
    source: str
    kind: str
    location: Where
    text: str
    position: int = Field(description="1-based position of the passage in its file")
    passages_in_file: int
    before: list[Piece] = Field(description="the passages just before it in the file, in file order")
    after: list[Piece] = Field(description="the passages just after it, in file order")


class Folder(BaseModel):
    path: str
    files: dict[str, int] = Field(description="file count by status: indexed, skipped, failed, pending")
    chunks: int


class FileEntry(BaseModel):
    path: str
    kind: str
    status: str = Field(description="indexed, skipped, failed or pending")
    reason: str = Field(description="why a file was skipped or failed ('' when indexed)")
    passages: int
    embedded: int = Field(description="passages with a semantic vector")
    modified: str = Field(description="file modification time, ISO 8601 (UTC)")


class SourcesOut(BaseModel):
    folders: list[Folder]
    files: list[FileEntry] = Field(description="the files of the folder asked for, or the files added on their own")
    files_total: int = Field(description="how many files matched before the limit")
    documents: dict[str, int] = Field(description="whole library: file count by status")
    passages: int
    vectors: int
    vectors_pending: int
    model: str | None


class Problem(BaseModel):
    path: str
    status: str = Field(description="skipped or failed")
    reason: str


class IndexOut(BaseModel):
    path: str
    indexed: int
    unchanged: int
    skipped: int
    failed: int
    removed: int
    passages_added: int
    passages_embedded: int
    cancelled: bool
    problems: list[Problem]
