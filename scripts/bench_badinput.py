"""What issue 11's checks cost: the text-hash migration, `check`'s vector-identity pass, and ignore rules in the
walk. Prints a table; figures go to docs/BENCHMARKS.md ("Bad input: costs of the checks").

    nice -n 5 python scripts/bench_badinput.py [--chunks 100000] [--tree /work/shared/eval]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import apsw
import numpy as np

from desktop_memory.config import IngestSettings
from desktop_memory.ingest.walk import walk_paths
from desktop_memory.store import Store
from desktop_memory.store.connection import load_vec
from desktop_memory.store.migrations import MIGRATIONS, _migration_text_hash
from desktop_memory.store.vectors import sign_bits

DIM = 384


def build_v2(path: Path, n_chunks: int) -> None:
    """A schema-2 database with n_chunks chunks of ~800 characters and a vector each (as the last release wrote)."""
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(5000)]
    conn = apsw.Connection(str(path))
    load_vec(conn)
    conn.execute("pragma journal_mode=wal").fetchall()
    with conn:
        conn.execute(MIGRATIONS[0])
        MIGRATIONS[1](conn)
        conn.execute("insert into meta values('model_id', 'bench'), ('dim', ?)", (str(DIM),))
        for start in range(0, n_chunks, 10_000):
            n = min(10_000, n_chunks - start)
            doc = start // 10 + 1
            conn.executemany("insert into documents(id, path, kind, status) values(?, ?, 'text', 'indexed')",
                             [(doc + d, f"/bench/doc{doc + d}.txt") for d in range(n // 10)])
            texts = [" ".join(rng.choice(words, 120)) for _ in range(n)]
            rows = [(start + i + 1, doc + i // 10, i % 10, t, 0, len(t)) for i, t in enumerate(texts)]
            conn.executemany("insert into chunks(id, doc_id, ord, text, char_start, char_end, embedded) "
                             "values(?, ?, ?, ?, ?, ?, 1)", rows)
            vecs = rng.standard_normal((n, DIM)).astype("<f4")
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            bits = sign_bits(vecs)
            conn.executemany("insert into chunk_vectors(id, embedding) values(?, ?)",
                             [(start + i + 1, vecs[i].tobytes()) for i in range(n)])
            conn.executemany("insert into chunk_vector_bits(id, bits) values(?, ?)",
                             [(start + i + 1, bits[i].tobytes()) for i in range(n)])
        conn.execute("insert into chunks_fts(chunks_fts) values('rebuild')")
        conn.execute("pragma user_version = 2")
    conn.close()


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--tree", default="/work/shared/eval")
    opts = ap.parse_args()
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "v2.db"
        build_v2(db, opts.chunks)
        conn = apsw.Connection(str(db))
        conn.execute("begin")
        t = timed(lambda: _migration_text_hash(conn))
        conn.execute("rollback")
        conn.close()
        rows.append((f"text-hash migration alone ({opts.chunks:,} chunks + vectors)", f"{t:.2f} s"))
        t = timed(lambda: Store(db).close())
        rows.append(("first open: backup .bak-v2 + migrations 3-5", f"{t:.2f} s"))
        store = Store(db)
        t_id = timed(store._check_vector_identity)
        t_all = timed(store.check_integrity)
        t_pre = timed(lambda: Store(db).close())
        store.close()
        rows.append(("check: vector-text identity pass", f"{t_id:.2f} s"))
        rows.append(("check: whole `desktop-memory check`", f"{t_all:.2f} s"))
        rows.append(("open an up-to-date database (incl. schema pre-flight)", f"{t_pre * 1000:.0f} ms"))
    tree = Path(opts.tree)
    for label, settings in (("ignore files on (default)", IngestSettings()),
                            ("ignore files off", IngestSettings(use_ignore_files=False)),
                            ("+ 20 user patterns", IngestSettings(extra_ignore=tuple(f"dir{i}/*.x{i}"
                                                                                       for i in range(20))))):
        n = sum(1 for _ in walk_paths([tree], settings))  # also warms the OS cache
        t = min(timed(lambda s=settings: list(walk_paths([tree], s))) for _ in range(3))
        rows.append((f"walk {tree} ({n:,} entries), {label}", f"{t * 1000:.0f} ms"))
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  value")
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    main()
