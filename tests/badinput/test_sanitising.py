"""Property-based: whatever text reaches the filters, the query or the numeric arguments, the result is a list of
results or a clear UserError / usage message, never an exception from SQLite, a codec or int/float conversion."""

from __future__ import annotations

import argparse
import io
import shutil
import sys
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop_memory import cli
from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.errors import UserError
from desktop_memory.models import SearchFilters
from desktop_memory.retrieve.filters import MAX_GLOB_CHARS, clean_filters, clean_path_text, clean_text
from desktop_memory.service import MemoryService
from desktop_memory.store.filters import filter_sql
from tests.conftest import MDDOCS

# any code point, lone surrogates (what Python makes of undecodable argv bytes) and NUL included
ANY_TEXT = st.one_of(
    st.text(st.characters(codec=None, exclude_categories=()), max_size=60),
    st.text(st.sampled_from(["\udcff", "\ud800", "\udfff", "\x00", "*", "?", "[", "]", "/", "-", "a", "é", "\\"]),
            max_size=20),
)
NUMBERS = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.integers(-(10**30), 10**30))


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("sanitise")
    for name in ("query-params.md", "path-params.md", "body.md"):
        shutil.copy(MDDOCS / "fastapi" / "tutorial" / name, base / name)
    (base / "caf\udcff.md".encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape")).write_text(
        "# Odd name\n\nquery parameters in an oddly named file\n", encoding="utf-8")
    service = MemoryService(Settings(), db_path=base / "lib.db", embedder=HashEmbedder(32))
    service.index_paths([base])
    yield service
    service.close()


def _valid_sqlite_text(text: str) -> bool:
    return "\x00" not in text and not any("\ud800" <= c <= "\udfff" for c in text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prefix=st.one_of(st.none(), ANY_TEXT), glob=st.one_of(st.none(), ANY_TEXT),
       kinds=st.lists(ANY_TEXT, max_size=3), since=NUMBERS, until=NUMBERS)
def test_clean_filters_are_valid_or_refused(*, prefix, glob, kinds, since, until) -> None:
    filters = SearchFilters(path_prefix=prefix, path_glob=glob, kinds=tuple(kinds), modified_since=since,
                            modified_until=until)
    try:
        clean = clean_filters(filters)
    except UserError as exc:
        assert str(exc)
        return
    assert clean is not None
    for text in (clean.path_prefix or "", clean.path_glob or "", *clean.kinds):
        assert _valid_sqlite_text(text)
        text.encode("utf-8")  # JSON, SQLite and the tokenizers accept it
    where, params = filter_sql(filters)
    assert isinstance(where, str) and all(not isinstance(p, str) or _valid_sqlite_text(p) for p in params)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=ANY_TEXT, prefix=st.one_of(st.none(), ANY_TEXT), glob=st.one_of(st.none(), ANY_TEXT),
       top_k=st.one_of(st.none(), st.integers(-5, 10**25)), backend=st.sampled_from(["keyword", "bm25", "dense",
                                                                                     "hybrid"]))
def test_search_never_raises_anything_but_user_error(svc, *, query, prefix, glob, top_k, backend) -> None:
    try:
        results = svc.search_outcome(query, backend=backend, top_k=top_k,
                             filters=SearchFilters(path_prefix=prefix, path_glob=glob)).results
    except UserError as exc:
        assert str(exc)
        return
    assert isinstance(results, list)
    assert top_k is None or len(results) <= top_k


def test_undecodable_filter_bytes_match_the_stored_escaped_name(svc) -> None:
    """`--glob $'*\\xff*'` reaches Python as a lone surrogate; stored names spell such bytes as \\xNN."""
    glob = "*\udcff*"
    assert clean_path_text(glob) == "*\\xff*"
    results = svc.search_outcome("odd", backend="keyword", filters=SearchFilters(path_glob=glob)).results
    assert results == [] or all("\\xff" in r.source for r in results)
    assert clean_text("a\x00b\ud800") == "ab\ufffd"


def test_long_glob_is_refused_with_a_message() -> None:
    with pytest.raises(UserError, match="too long"):
        clean_filters(SearchFilters(path_glob="*" * (MAX_GLOB_CHARS + 1)))


@settings(max_examples=400, deadline=None)
@given(text=st.one_of(ANY_TEXT, st.from_regex(r"\A[+-]?\d{1,400}[dhw]?\Z"), st.from_regex(r"\A\d{4}-\d\d-\d\d\Z")))
def test_numeric_and_date_arguments_parse_or_say_why(text: str) -> None:
    for parse in (cli._bounded_int(1, 1000), cli._parse_when):
        try:
            value = parse(text)
        except argparse.ArgumentTypeError as exc:
            assert str(exc)
            continue
        assert isinstance(value, (int, float))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=st.lists(st.one_of(ANY_TEXT, st.sampled_from(["-k", "--top-k", "--since", "--until", "--glob", "--path",
                                                           "--", "-hugo", "99999999999999999999999"])),
                     min_size=1, max_size=4))
def test_cli_search_arguments_give_results_or_usage(svc, capsys, args: list[str]) -> None:
    db = str(Path(svc.db_path))
    try:  # a lone "-" reads the question from stdin (issue 33): give it one, as a pipe would
        with mock.patch.object(sys, "stdin", io.StringIO("a question from a pipe\n")):
            code = cli.main(["--db", db, "search", "--backend", "keyword", *args])
    except SystemExit as exc:  # argparse: bad usage, message on stderr
        assert exc.code == 2
        assert "error:" in capsys.readouterr().err
        return
    out = capsys.readouterr()
    assert code in (0, 1), out
    assert "Traceback" not in out.err
