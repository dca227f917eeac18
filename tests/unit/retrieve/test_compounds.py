"""A compound written one way in the question and another in the notes (issue 30 item 1: "wifi password" against
a note that writes "Wi-Fi"): the keyword lane and match strength's wording read it the library's way
(retrieve/compounds.py), on a real SQLite+FTS5 store."""

from __future__ import annotations

import pytest

from desktop_memory.models import ChunkDraft, Location
from desktop_memory.retrieve.compounds import compound_counts
from desktop_memory.retrieve.lanes import fts_lane
from desktop_memory.retrieve.strength import keyword_ceiling
from desktop_memory.retrieve.wording import Wording
from desktop_memory.store import Store

NOTES = {
    "network.md": "Home network. The Wi-Fi password is on the router's sticker; the guest network has its own.",
    "mail.md": "Write an email to the landlord about the boiler before Friday.",
    "garden.md": "Set-up for the greenhouse: staging, a thermometer and two water butts.",
    "books.md": "Reading list: a book about bees, a book about soil.",
    "bank.md": "Bank: the online banking password is in the password manager, not here.",
}


def _library(tmp_path, extra: dict[str, str] | None = None) -> Store:
    store = Store(tmp_path / "lib.db")
    for path, text in (NOTES | (extra or {})).items():
        store.write_document(path=f"/notes/{path}", kind="text", language=None, title=None, size=len(text),
                             mtime=1.0, content_hash=path, chunks=[ChunkDraft(text, Location(char_end=len(text)))],
                             dedupe_keys=[path])
    return store


def _first_path(store: Store, query: str) -> str:
    cid = fts_lane(store, query, 10)[0][0]
    return store.reads.chunk_rows([cid])[cid].path


def test_a_joined_word_the_notes_write_hyphenated_is_read_as_their_phrase(tmp_path):
    store = _library(tmp_path)
    assert list(compound_counts(store, "wifi password")) == ["wi fi", "password"]
    assert list(compound_counts(store, "greenhouse setup")) == ["greenhouse", "set up"]
    # the note holding both is first, and holds the whole question's weight (not half of it)
    assert _first_path(store, "wifi password").endswith("network.md")
    ranked = fts_lane(store, "wifi password", 200)
    assert Wording(store, "wifi password", ranked).coverage(ranked[0][0]) == pytest.approx(1.0)


def test_a_hyphenated_word_the_notes_write_joined_is_read_joined(tmp_path):
    store = _library(tmp_path)
    assert list(compound_counts(store, "e-mail landlord")) == ["email", "landlord"]
    ranked = fts_lane(store, "e-mail landlord", 200)
    assert store.reads.chunk_rows([ranked[0][0]])[ranked[0][0]].path.endswith("mail.md")
    assert Wording(store, "e-mail landlord", ranked).coverage(ranked[0][0]) == pytest.approx(1.0)
    # "Wi-Fi" asked as written: the notes hold it as written, nothing changes
    assert list(compound_counts(store, "Wi-Fi password")) == ["wi", "fi", "password"]


def test_words_the_library_holds_and_nonsense_are_left_alone(tmp_path):
    store = _library(tmp_path, {"laptop.md": "The laptop's wifi card drops out after sleep."})
    assert list(compound_counts(store, "wifi password")) == ["wifi", "password"]  # the library writes "wifi" too
    # a split into a stopword is no compound ("abook" is not "a book"), a letter string has no split the notes hold
    assert list(compound_counts(store, "abook")) == ["abook"]
    assert list(compound_counts(store, "xqzvblorft password")) == ["xqzvblorft", "password"]
    # the ceiling counts what the lane sends: the split phrase weighs what its words weigh, the unknown word most
    assert keyword_ceiling(store, "wifi password") > 0


def test_a_new_note_changes_the_answer_at_once(tmp_path):
    store = Store(tmp_path / "lib.db")
    text = "Bank: the online banking password is in the password manager."
    store.write_document(path="/notes/bank.md", kind="text", language=None, title=None, size=len(text), mtime=1.0,
                         content_hash="bank", chunks=[ChunkDraft(text, Location(char_end=len(text)))],
                         dedupe_keys=["bank"])
    assert list(compound_counts(store, "wifi password")) == ["wifi", "password"]
    text = "The Wi-Fi password is on the router."
    store.write_document(path="/notes/net.md", kind="text", language=None, title=None, size=len(text), mtime=1.0,
                         content_hash="net", chunks=[ChunkDraft(text, Location(char_end=len(text)))],
                         dedupe_keys=["net"])
    assert list(compound_counts(store, "wifi password")) == ["wi fi", "password"]  # not the remembered answer


def test_two_words_the_notes_write_as_one_are_read_joined(tmp_path):
    store = _library(tmp_path)
    assert list(compound_counts(store, "pass word bank")) == ["password", "bank"]
    assert _first_path(store, "pass word bank").endswith("bank.md")
    ranked = fts_lane(store, "pass word bank", 200)
    assert Wording(store, "pass word bank", ranked).coverage(ranked[0][0]) == pytest.approx(1.0)
    # words the notes hold side by side are left as they are
    assert list(compound_counts(store, "guest network")) == ["guest", "network"]


def test_the_highlight_marks_the_notes_spelling(tmp_path):
    from desktop_memory.retrieve.highlight import marked_texts, spans

    store = _library(tmp_path)
    cid = fts_lane(store, "wifi password", 10)[0][0]
    text, found = spans(marked_texts(store, "wifi password", [cid])[cid])
    assert [text[a:b] for a, b in found] == ["Wi-Fi", "password"]
