"""Markdown chunking by heading sections (#, ##, ###), with breadcrumbs, merging of tiny sections, windows.

* A section runs from a split-level heading (levels 1–3) to the next one. Its body excludes its own heading
  line, which is represented by the breadcrumb instead ("Title › Section › Subsection").
* Front matter is never a chunk; its ``title:`` acts as a level-1 heading until a real ``#`` heading appears.
* Tiny sections are packed with neighbours under a common parent: the merged chunk then starts at the first
  section's heading line (so no heading text is lost) and its breadcrumb is the common prefix of the paths.
* Sections longer than ``target_chars`` are windowed over paragraphs with overlap; ``max_chars`` caps the body.
* Not chunked at all (outside every span): front matter and the heading lines that open a chunk.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config import ChunkSettings
from ..models import ChunkDraft, ExtractedDoc, Location
from .core import Limits, LineIndex, format_breadcrumb, trim, window_spans, with_breadcrumb
from .mdparse import front_matter_end, front_matter_title, iter_headings

SPLIT_LEVELS = 3


@dataclass
class Section:
    path: tuple[str, ...]
    head_start: int  # start of the heading line (== body_start for the preamble)
    body_start: int
    end: int
    size: int = 0  # trimmed body length


def _common_prefix(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:
        n += 1
    return a[:n]


def split_sections(text: str) -> list[Section]:
    """Sections in document order (empty ones included; the caller drops them)."""
    fm_end = front_matter_end(text)
    levels: dict[int, str] = {}
    title = front_matter_title(text)
    if title:
        levels[1] = title
    sections: list[Section] = []
    path: tuple[str, ...] = tuple(levels[k] for k in sorted(levels))
    head_start = body_start = fm_end
    for h in iter_headings(text, fm_end):
        if h.level > SPLIT_LEVELS:
            continue
        sections.append(Section(path, head_start, body_start, h.start))
        levels = {k: v for k, v in levels.items() if k < h.level}
        levels[h.level] = h.title
        path = tuple(levels[k] for k in sorted(levels))
        head_start, body_start = h.start, min(h.end + 1, len(text))
    sections.append(Section(path, head_start, body_start, len(text)))
    for s in sections:
        a, b = trim(text, s.body_start, s.end)
        s.size = b - a
    return sections


@dataclass
class _Group:
    members: list[Section]
    crumb: tuple[str, ...]

    @property
    def start(self) -> int:
        first = self.members[0]
        if len(self.members) == 1 or len(self.crumb) >= len(first.path):
            return first.body_start
        return first.head_start  # the first heading is not in the breadcrumb: keep its line in the body

    @property
    def end(self) -> int:
        return self.members[-1].end


def _related(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Siblings, parent/child, or uncle/nephew: close enough to share one chunk under the common prefix."""
    return len(_common_prefix(a, b)) >= min(len(a), len(b)) - 1


def _span_len(text: str, start: int, end: int) -> int:
    a, b = trim(text, start, end)
    return b - a


def group_sections(text: str, sections: list[Section], lim: Limits) -> list[_Group]:
    """Greedy left-to-right packing of small neighbouring sections (forward and backward merges)."""
    groups: list[_Group] = []
    for sec in (s for s in sections if s.size):
        if groups:
            g = groups[-1]
            crumb = _common_prefix(g.crumb, sec.path)
            if _related(g.crumb, sec.path):
                trial = _Group(g.members + [sec], crumb)
                combined = _span_len(text, trial.start, trial.end)
                g_size = _span_len(text, g.start, g.end)
                small = min(g_size, sec.size) < lim.tiny
                if combined <= lim.target or (small and combined <= lim.maxc):
                    groups[-1] = trial
                    continue
        groups.append(_Group([sec], sec.path))
    return groups


def chunk_markdown(doc: ExtractedDoc, settings: ChunkSettings) -> list[ChunkDraft]:
    text = doc.text
    lim = Limits.from_settings(settings)
    lines = LineIndex(text)
    out: list[ChunkDraft] = []
    for g in group_sections(text, split_sections(text), lim):
        crumb = format_breadcrumb(g.crumb)
        # several sections packed to fit one chunk, or one long section split into windows
        spans = [trim(text, g.start, g.end)] if len(g.members) > 1 else window_spans(text, g.start, g.end, lim)
        for cs, ce in spans:
            out.append(_draft(text, cs, ce, g.crumb, crumb, lines))
    if not out:
        out = _heading_only_fallback(text, lim, lines)
    return out


def _draft(text: str, cs: int, ce: int, path: tuple[str, ...], crumb: str, lines: LineIndex) -> ChunkDraft:
    loc = Location(heading_path=tuple(path), line_start=lines.line_at(cs), line_end=lines.line_at(ce),
                   char_start=cs, char_end=ce)
    return ChunkDraft(text=with_breadcrumb(crumb, text[cs:ce]), location=loc)


def _heading_only_fallback(text: str, lim: Limits, lines: LineIndex) -> list[ChunkDraft]:
    """A document of headings only ("# My Project") still gets findable chunks: its raw text, windowed."""
    fm_end = front_matter_end(text)
    title = front_matter_title(text)
    path = (title,) if title else ()
    crumb = format_breadcrumb(path)
    return [_draft(text, cs, ce, path, crumb, lines) for cs, ce in window_spans(text, fm_end, len(text), lim)]
