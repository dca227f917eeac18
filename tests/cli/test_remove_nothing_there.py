"""QA walk (issue 30 item 4 through the CLI): `remove` of a path the library does not hold (a typo, a file outside
every library folder) said "removed 0 document(s) from the index" and exited 0, so a script or a person believed
it done. It now says there is nothing in the library there and exits 1; removing a path removed before says so and
how to bring it back (exit 0: it is out, as asked)."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import run_cli, write_settings


def test_remove_says_when_there_was_nothing_to_remove(tmp_path):
    config = write_settings(tmp_path / "config", embedder={"kind": "hash"})
    notes = tmp_path / "notes"
    (notes / "trip").mkdir(parents=True)
    (notes / "car.txt").write_text("tyre pressure 2.4 bar\n", encoding="utf-8")
    (notes / "trip" / "ferry.txt").write_text("ferry to Mull at ten\n", encoding="utf-8")
    db = tmp_path / "m.db"
    assert run_cli(db, "index", "-q", str(notes), config=config).returncode == 0

    typo = run_cli(db, "remove", str(notes / "cra.txt"), config=config)
    assert typo.returncode == 1, typo
    assert f"nothing in the library at {notes / 'cra.txt'}" in typo.stderr, typo.stderr
    outside = Path(tmp_path / "elsewhere.txt")
    outside.write_text("x\n", encoding="utf-8")
    res = run_cli(db, "remove", str(outside), config=config)
    assert res.returncode == 1 and "nothing in the library at" in res.stderr, res

    first = run_cli(db, "remove", str(notes / "trip"), config=config)
    assert first.returncode == 0 and "is excluded from its library folder" in first.stdout, first
    again = run_cli(db, "remove", str(notes / "trip"), config=config)
    assert again.returncode == 0 and "was removed before" in again.stderr and "include" in again.stderr, again
    listed = run_cli(db, "list", config=config).stdout
    assert "car.txt" in listed and "ferry.txt" not in listed  # the typo removed nothing
