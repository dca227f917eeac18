"""Search results: long-query term weights, every copy of a passage findable, one row per file, and match strength
(strong/weak, also while a library is read but not yet embedded).

Real files (the FastAPI docs in tests/data/eval), the real pipeline and SQLite store; the hash embedder where the test
is about reachability or grouping, the real model where it is about match strength."""

from __future__ import annotations

import shutil

import pytest

from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.models import SearchFilters
from desktop_memory.retrieve.query_text import (
    LONG_QUERY_TERMS,
    MAX_TERMS,
    or_match,
    term_counts,
    weighted_terms,
)
from desktop_memory.service import MemoryService

BACKENDS = ("hybrid", "keyword", "dense", "bm25")


@pytest.fixture()
def two_folders(tmp_path, eval_dir):
    """The same real page in folders a/ and b/ (its chunks collapse onto a/'s), plus other real pages in a/."""
    src = eval_dir / "mddocs" / "fastapi" / "tutorial"
    root = tmp_path / "lib"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    for name in ("query-params.md", "path-params.md", "body.md"):
        shutil.copy(src / name, root / "a" / name)
    shutil.copy(src / "query-params.md", root / "b" / "copy-of-query-params.md")
    svc = MemoryService(Settings(), db_path=tmp_path / "idx.db", embedder=HashEmbedder(64))
    summary = svc.index_paths([root / "a"])
    svc.index_paths([root / "b"])
    assert summary.indexed == 3
    yield svc, root
    svc.close()


def test_a_collapsed_copy_is_found_under_a_filter_on_its_folder(two_folders):
    svc, root = two_folders
    with svc.reading() as store:
        assert store.counts()["duplicates"] > 0  # b/'s chunks were collapsed onto a/'s
    copy = str(root / "b" / "copy-of-query-params.md")
    original = str(root / "a" / "query-params.md")
    for backend in BACKENDS:
        out = svc.search_outcome("optional query parameters default value", backend=backend, top_k=5,
                                 filters=SearchFilters(path_prefix=str(root / "b") + "/"))
        assert out.results, backend
        assert all(r.source == copy for r in out.results), backend
        assert all(original in r.also_in for r in out.results), backend
        # the shown row is the copy's own chunk: its text and location are from that file
        with svc.reading() as store:
            row = store.conn.execute("select d.path from chunks c join documents d on d.id = c.doc_id where c.id = ?",
                                     (out.results[0].chunk_id,)).fetchone()
        assert row[0] == copy


def test_unfiltered_results_name_every_file_holding_the_passage(two_folders):
    svc, root = two_folders
    out = svc.search_outcome("optional query parameters default value", backend="keyword", top_k=5)
    top = out.results[0]
    assert top.source == str(root / "a" / "query-params.md")
    assert top.also_in == [str(root / "b" / "copy-of-query-params.md")]
    assert top.to_dict()["also_in"] == top.also_in
    # a filter that holds neither file finds nothing, a kind filter that holds both shows the canonical file
    none = svc.search_outcome("optional query parameters", backend="keyword",
                              filters=SearchFilters(path_prefix=str(root / "nowhere")))
    assert none.results == []
    md = svc.search_outcome("optional query parameters", backend="keyword", top_k=5,
                            filters=SearchFilters(kinds=("markdown",)))
    assert md.results[0].source == top.source


def test_deleting_the_canonical_file_keeps_the_copy_findable(two_folders):
    svc, root = two_folders
    (root / "a" / "query-params.md").unlink()
    svc.index_paths([root / "a"])
    out = svc.search_outcome("optional query parameters default value", backend="keyword", top_k=3)
    assert out.results[0].source == str(root / "b" / "copy-of-query-params.md")
    assert out.results[0].also_in == []


def test_first_screen_shows_distinct_files_and_keeps_passages_for_the_context(two_folders):
    svc, _root = two_folders
    out = svc.search_outcome("path parameters query parameters request body", backend="keyword", top_k=3)
    sources = [r.source for r in out.results]
    assert len(set(sources)) < len(sources)  # the passage list repeats a file (context may take several)
    files = [r.source for r in out.files]
    assert len(files) == len(set(files)) == 3  # one row per file, top_k files
    by_id = {r.chunk_id: r for r in out.results}
    for row in out.files:
        for cid in row.more_in_file:
            assert cid != row.chunk_id
            if cid in by_id:
                assert by_id[cid].source == row.source
    assert any(row.more_in_file for row in out.files)
    assert [r.rank for r in out.results] == list(range(1, len(out.results) + 1))
    ranks = [r.rank for r in out.files]
    assert ranks == sorted(ranks) and ranks[0] == 1  # a file row keeps its place in the full ranking
    # files are in the order of their best passage
    firsts = list(dict.fromkeys(sources))
    assert files[: len(firsts)] == firsts[: len(files)]


def test_repeated_words_weigh_more_only_in_long_queries():
    short = "heat transfer heat flux"
    assert or_match(weighted_terms(term_counts(short))) == '"heat" OR "transfer" OR "flux"'
    words = [f"w{i}" for i in range(LONG_QUERY_TERMS)]
    long_query = " ".join(words + ["w0", "w0", "w1"])
    expr = or_match(weighted_terms(term_counts(long_query)))
    assert expr.count('"w0"') == 3 and expr.count('"w1"') == 2 and expr.count('"w5"') == 1
    # no 48-term cut: a pasted paragraph keeps its words (up to MAX_TERMS distinct ones)
    many = " ".join(f"t{i}" for i in range(200))
    assert len(term_counts(many)) == 200 <= MAX_TERMS
    assert weighted_terms(term_counts(long_query), keep=["w1"]) == ["w1", "w1"]


@pytest.fixture(scope="module")
def scifact_sample(tmp_path_factory, eval_dir):
    """Eight real SciFact abstracts (the relevant ones of three test claims, and others), indexed with the real
    model through the real pipeline."""
    import json

    wanted = {"31715818", "14717500", "13734012"}
    docs = {}
    with open(eval_dir / "scifact" / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            if d["_id"] in wanted or len(docs) < 5:
                docs[d["_id"]] = d
            if wanted <= set(docs) and len(docs) >= 8:
                break
    root = tmp_path_factory.mktemp("scifact") / "abstracts"
    root.mkdir()
    for did, d in docs.items():
        (root / f"{did}.md").write_text(f"# {d['title']}\n\n{d['text']}\n", encoding="utf-8")
    svc = MemoryService(Settings(), db_path=root.parent / "idx.db")
    svc.index_paths([root])
    yield svc
    svc.close()


@pytest.mark.parametrize(("claim", "doc"), [
    ("1/2000 in UK have abnormal PrP positivity.", "13734012"),
    ("1,000 genomes project enables mapping of genetic sequence variation consisting of rare variants with larger "
     "penetrance effects than common variants.", "14717500"),
])
def test_a_real_claim_is_a_strong_match(scifact_sample, claim, doc):
    out = scifact_sample.search_outcome(claim, backend="hybrid", top_k=5)
    hit = next(r for r in out.results if r.source.endswith(f"{doc}.md"))
    assert hit.rank <= 3 and hit.strength == "strong" and not out.weak
    assert hit in out.strong_results()


@pytest.mark.parametrize("nonsense", ["qzxv plorth wemb", "giraffe saxophone umbrella lantern",
                                      "xkcd zzzz qqqq", "carburettor tangerine bishop"])
def test_nonsense_is_weak_on_every_backend(scifact_sample, nonsense):
    for backend in ("hybrid", "dense", "keyword"):
        out = scifact_sample.search_outcome(nonsense, backend=backend, top_k=5)
        assert out.weak, (backend, [(r.strength, r.explain()) for r in out.results])
        assert out.strong_results() == []
        assert all(r.strength == "weak" for r in out.results)


def test_a_pasted_paragraph_keeps_its_telling_words(two_folders):
    """Past 64 distinct words the lane keeps the weightiest (qtf x idf) of those the library holds, not the first
    ones: a rare word at the end of a long paste still finds its page; words nothing holds are left out."""
    from desktop_memory.retrieve.keyword import LONG_QUERY_KEEP, weightiest_terms

    svc, _root = two_folders
    with svc.reading() as store:
        conn = store.conn
        conn.execute("create virtual table if not exists temp.v_row using fts5vocab(main, chunks_fts, 'row')")
        common = [t for (t,) in conn.execute(
            "select term from temp.v_row where term glob '[a-z]*' and length(term) > 3 order by doc desc, term limit ?",
            (LONG_QUERY_KEEP + 20,))]
        rare = conn.execute("select term from temp.v_row where term glob '[a-z]*' and length(term) > 6 "
                            "order by doc, term limit 1").fetchone()[0]
        paste = " ".join(common) + " zzyzxq " + rare
        kept, unknown = weightiest_terms(store, term_counts(paste))
        assert len(kept) == LONG_QUERY_KEEP and rare in kept and common[0] not in kept
        assert "zzyzxq" in unknown and not set(unknown) & set(kept)
        # the lane matches through the kept rare word: its chunk scores more than with the word left out
        from desktop_memory.retrieve.lanes import fts_lane

        holder = conn.execute("select rowid from chunks_fts where chunks_fts match ?", (rare,)).fetchone()[0]
        with_rare = dict(fts_lane(store, paste, 200))
        without = dict(fts_lane(store, paste.replace(" " + rare, ""), 200))
        assert with_rare[holder] > without.get(holder, 0.0)


def test_hybrid_strength_needs_the_lanes_to_agree_on_a_middling_cosine():
    """Both lanes ran: a cosine between COS_AGREE and AGREE_TARGET is strong only when the chunk also holds enough
    of the query's keyword weight (more the lower the cosine; a word salad's one distinctive word gives cosine ~0.5
    but a small share); the dense backend alone keeps its own cosine threshold; a chunk the semantic lane did not
    rank is weak."""
    from desktop_memory.models import LaneHit
    from desktop_memory.retrieve.strength import (
        AGREE_TARGET,
        AGREE_WEIGHT,
        COS_AGREE,
        COS_STRONG,
        STRONG,
        WEAK,
        LaneScale,
        judge,
    )

    scale = LaneScale(ceiling=10.0)

    def hybrid(cos: float, share: float | None) -> str:
        hits = {"dense": LaneHit(1, cos)}
        if share is not None:
            hits["fts"] = LaneHit(1, 10.0 * share)
        return judge(hits, scale, semantic=True, keyword=True)[0]

    middling = (COS_AGREE + AGREE_TARGET) / 2
    needed = (AGREE_TARGET - middling) / AGREE_WEIGHT
    assert hybrid(middling, needed + 0.01) == STRONG
    assert hybrid(middling, needed - 0.01) == WEAK
    assert hybrid(middling, None) == WEAK
    assert hybrid(COS_AGREE + 0.01, (AGREE_TARGET - COS_AGREE) / AGREE_WEIGHT) == STRONG  # low cosine: more share
    assert hybrid(COS_AGREE + 0.01, needed + 0.01) == WEAK
    assert hybrid(AGREE_TARGET, None) == STRONG
    assert hybrid(COS_AGREE - 0.01, 0.99) == WEAK
    assert judge({"fts": LaneHit(1, 9.9)}, scale, semantic=True, keyword=True)[0] == WEAK
    # the dense backend has no keyword evidence: its own threshold
    assert judge({"dense": LaneHit(1, COS_STRONG)}, scale, semantic=True)[0] == STRONG
    assert judge({"dense": LaneHit(1, COS_STRONG - 0.01)}, scale, semantic=True)[0] == WEAK


def test_a_library_read_but_not_yet_embedded_still_has_strong_keyword_matches(tmp_path):
    from desktop_memory.embed.hashing import HashEmbedder

    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "plan.md").write_text("# Plan\n\nThe launch plan names every milestone.\n", encoding="utf-8")
    (folder / "other.md").write_text("# Other\n\nGardening notes about tomatoes.\n", encoding="utf-8")
    svc = MemoryService(Settings(), db_path=tmp_path / "m.db", embedder=HashEmbedder(64))
    try:
        svc.index_paths([folder], embed=False)  # the window reads first and embeds later
        with svc.writing() as store:  # ...and the embedding job has just started: the model is recorded, no vectors
            store.ensure_model(svc.embedder.model_id, svc.embedder.dim)
        out = svc.search_outcome("launch plan milestone", backend="hybrid")
        assert out.results and out.results[0].strength == "strong" and not out.weak
    finally:
        svc.close()
