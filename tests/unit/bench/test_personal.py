"""The personal-library evaluation's data is what its docs say (no model needed): every question names a file that
exists in its folder, the train and test folders do not overlap, folders hold 5-300 files, and the table adds up."""

from __future__ import annotations

from desktop_memory_bench.personal import DATA, FolderScore, load_questions, table


def test_questions_point_at_real_files_and_the_splits_do_not_share_a_folder():
    qs = load_questions()
    assert qs and all(1 <= len(q.query.split()) <= 4 for q in qs if q.answer)
    for q in qs:
        if q.answer:
            assert (DATA / q.folder / q.answer).is_file(), q
    splits = {q.folder: q.split for q in qs}
    assert all(splits[q.folder] == q.split for q in qs)  # a folder is in one split only
    assert {s for s in splits.values()} == {"train", "test"}
    for folder in splits:
        assert 5 <= sum(1 for p in (DATA / folder).rglob("*") if p.is_file()) <= 300
    assert sum(q.answer is None for q in qs if q.split == "test") >= 10  # nonsense queries on the test folders


def test_the_table_totals_the_folders():
    a = FolderScore("a", files=5, questions=4, first=4, first_strong=3, in_context=3, nonsense=2, nonsense_weak=2)
    b = FolderScore("b", files=7, questions=6, first=5, first_strong=5, in_context=5, nonsense=3, nonsense_weak=3)
    out = table([a, b])
    assert "| total | 12 | 10 | 9/10 (90 %) | 8/10 (80 %) | 8/10 (80 %) | 5/5 (100 %) |" in out
