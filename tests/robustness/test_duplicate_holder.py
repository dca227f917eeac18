"""Issue 21 §8: which file holds a duplicated passage (its FTS row and vector, the "primary source" a search shows)
does not depend on processing order: the smallest path holds it, so a crash-then-finish and a clean run end
identical.

The walk visits ``b/x.md`` before ``b.md`` (names sorted per folder: "b" < "b.md") while by path ``b.md`` sorts
first ("." < "/"): exactly the case where "first processed" and "smallest path" disagree. The crash is reproduced
where it bites: a forced re-index that rewrote the holder's file and stopped there, then an ordinary run to finish.
"""

from __future__ import annotations

from pathlib import Path

import apsw
import numpy as np

from desktop_memory.config import EmbedderSettings, Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.service import MemoryService

from .conftest import audit_db, run_cli

SHARED = " ".join(["The lighthouse keeper logs every passing ship in the blue ledger before dawn."] * 9)


def _tree(root: Path) -> Path:
    (root / "b").mkdir(parents=True)
    for name, own in (("b/x.md", "walnut"), ("b.md", "hazel"), ("a.md", "chestnut"), ("c.md", "almond")):
        mine = " ".join([f"Only this file mentions {own} trees and their {own} harvest in the autumn."] * 9)
        (root / name).write_text(f"# Shared\n\n{SHARED}\n\n## {own.title()}\n\n{mine}\n")
    return root


def _service(db: Path) -> MemoryService:
    return MemoryService(Settings(db_path=str(db), embedder=EmbedderSettings(kind="hash")), embedder=HashEmbedder(64))


def holders(db: Path) -> dict[str, tuple[str, list[str]]]:
    """{dedupe key: (holder's path relative to its folder, sorted relative paths of its duplicates)}."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        root = conn.execute("select path from roots").fetchone()[0]
        out = {}
        for key, cid, path in conn.execute(
            "select c.dedupe_key, c.id, d.path from chunks c join documents d on d.id = c.doc_id "
            "where c.dup_of is null and exists (select 1 from chunks k where k.dup_of = c.id)"):
            dups = sorted(p[len(root) + 1:] for (p,) in conn.execute(
                "select d.path from chunks c join documents d on d.id = c.doc_id where c.dup_of = ?", (cid,)))
            out[key] = (path[len(root) + 1:], dups)
        return out
    finally:
        conn.close()


def _vectors_are_their_own_texts(db: Path) -> None:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    emb = HashEmbedder(64)
    try:
        rows = conn.execute("select c.text, v.embedding from chunks c join chunk_vectors v on v.id = c.id").fetchall()
        assert rows
        for text, blob in rows:
            assert np.allclose(np.frombuffer(blob, dtype=np.float32), emb.embed_documents([text])[0], atol=1e-6)
    finally:
        conn.close()


def test_crash_then_finish_ends_as_a_clean_run(tmp_path):
    clean_db, crash_db = tmp_path / "clean.db", tmp_path / "crash.db"
    clean_root, crash_root = _tree(tmp_path / "one" / "lib"), _tree(tmp_path / "two" / "lib")
    svc = _service(clean_db)
    try:
        svc.index_paths([clean_root])
        hit = svc.search_outcome("lighthouse keeper blue ledger", backend="keyword").results[0]
        assert hit.source == str(clean_root / "a.md"), "the smallest path is the primary source"
        assert sorted(hit.also_in) == [str(clean_root / n) for n in ("b.md", "b/x.md", "c.md")]
    finally:
        svc.close()
    svc = _service(crash_db)
    try:
        svc.index_paths([crash_root])
        # `index --force` rewrote the first files of its walk (a.md, b/x.md) and was killed there
        svc.index_paths([crash_root / "b" / "x.md"], force=True)
        svc.index_paths([crash_root / "a.md"], force=True)
        svc.index_paths([crash_root])  # the run that finishes the job
    finally:
        svc.close()
    assert holders(crash_db) == holders(clean_db)
    for db in (clean_db, crash_db):
        _vectors_are_their_own_texts(db)
        audit_db(db)


def test_processing_order_does_not_decide(tmp_path):
    one, two = tmp_path / "one.db", tmp_path / "two.db"
    root = _tree(tmp_path / "lib")
    svc = _service(one)
    try:
        svc.index_paths([root])
    finally:
        svc.close()
    svc = _service(two)
    try:  # the reverse order, one file at a time, then the folder
        for name in ("c.md", "b/x.md", "b.md", "a.md"):
            svc.index_paths([root / name])
        svc.index_paths([root])
    finally:
        svc.close()
    assert holders(one) == holders(two)
    assert next(iter(holders(one).values()))[0] == "a.md"


def test_a_full_forced_reindex_by_the_cli_keeps_every_holder(tmp_path, hash_config):
    db = tmp_path / "m.db"
    root = _tree(tmp_path / "lib")
    assert run_cli(db, "index", root, config=hash_config).returncode == 0
    before = holders(db)
    assert run_cli(db, "index", "--force", root, config=hash_config).returncode == 0
    assert holders(db) == before
    _vectors_are_their_own_texts(db)
    audit_db(db)


def _many(root: Path, n: int) -> Path:
    """``n`` files sharing 20 passages among them; folders ``sNN/`` walked before their twins ``sNN.md``."""
    groups = [" ".join([f"Shared passage number {k} about the {k}th lighthouse and its ledger."] * 9)
              for k in range(20)]
    for i in range(n):
        rel = f"s{i // 2:03d}/a.md" if i % 2 == 0 else f"s{i // 2:03d}.md"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        own = " ".join([f"File {i} alone talks about item {i} and its own {i} story."] * 9)
        path.write_text(f"# Shared\n\n{groups[i % 20]}\n\n## Own {i}\n\n{own}\n")
    return root


def test_kill9_during_a_forced_reindex_then_finishing_ends_as_a_clean_run(tmp_path, hash_config, ledger):
    """The real CLI, killed while `index --force` rewrites documents; an ordinary `index` finishes the job."""
    from .conftest import kill9, spawn_cli, wait_for

    n = 600
    clean_db, crash_db = tmp_path / "clean.db", tmp_path / "crash.db"
    clean_root, crash_root = _many(tmp_path / "one" / "lib", n), _many(tmp_path / "two" / "lib", n)
    assert run_cli(clean_db, "index", clean_root, config=hash_config).returncode == 0
    assert run_cli(crash_db, "index", crash_root, config=hash_config).returncode == 0
    conn = apsw.Connection(str(crash_db), flags=apsw.SQLITE_OPEN_READONLY)
    started = conn.execute("select max(indexed_at) from documents").fetchone()[0]
    conn.close()
    proc = spawn_cli(crash_db, "index", "--force", crash_root, config=hash_config, logs=tmp_path / "logs")
    ledger.fault("kill -9 during index --force")

    def rewritten() -> int:
        conn = apsw.Connection(str(crash_db), flags=apsw.SQLITE_OPEN_READONLY)
        try:
            return int(conn.execute("select count(*) from documents where indexed_at > ?", (started,)).fetchone()[0])
        finally:
            conn.close()

    try:
        wait_for(lambda: proc.poll() is not None or rewritten() >= 40, 240, interval=0.01, what="40 rewritten")
        assert proc.poll() is None, "the forced run finished before the kill: make the tree larger"
        kill9(proc)
    finally:
        if proc.poll() is None:
            kill9(proc)
    assert 40 <= rewritten() < n, "the kill landed inside the forced run"
    assert run_cli(crash_db, "index", crash_root, config=hash_config).returncode == 0
    assert holders(crash_db) == holders(clean_db)
    _vectors_are_their_own_texts(crash_db)
    audit_db(crash_db, ledger)
