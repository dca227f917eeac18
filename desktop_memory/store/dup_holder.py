"""Which copy of a duplicated passage holds it (its FTS row and vector): the one in the file with the smallest path.

Why a rule and not "whoever came first": processing order differs between a clean run, a run finished after a
crash and a forced re-index (a rewritten document hands its passages to a duplicate, then takes them back), so
"first" made the primary source of a duplicated passage depend on history. With the smallest path (SQLite's
binary text order, which is code point order, as Python's) every run over the same files ends identical.

Two places apply it: a new chunk takes over from a holder whose file sorts after its own (``take_over``), and a
deleted holder's passage goes to the duplicate whose file sorts first (``_promote_duplicates`` orders by path).
"""

from __future__ import annotations

from collections.abc import Sequence

import apsw

from .sql_values import as_int, as_str


def holders(conn: apsw.Connection, keys: Sequence[str], doc_id: int) -> dict[str, tuple[int, str]]:
    """{dedupe key: (holding chunk id, its file's path)} for the keys held by other documents."""
    found: dict[str, tuple[int, str]] = {}
    uniq = sorted(set(keys))
    for start in range(0, len(uniq), 500):
        part = uniq[start : start + 500]
        marks = ",".join("?" * len(part))
        for key, cid, path in conn.execute(
            f"select c.dedupe_key, c.id, d.path from chunks c join documents d on d.id = c.doc_id "
            f"where c.dup_of is null and c.dedupe_key in ({marks}) and c.doc_id != ? order by d.path desc, c.id desc",
            (*part, doc_id),
        ):
            found[as_str(key)] = (as_int(cid), as_str(path))  # the smallest path is read last and wins
    return found


def take_over(conn: apsw.Connection, pairs: Sequence[tuple[int, int]], has_vec: bool) -> tuple[int, int]:
    """Each ``(new, old)``: the new chunk (already inserted as a holder, with its FTS row) takes the passage over
    from the old holder, whose duplicates follow it. The old vector moves over only for the very same text (a
    duplicate shares the normalised body, not always the exact text); otherwise the new chunk waits to be
    embedded from its own text. Returns (vectors moved, vectors deleted)."""
    moved = deleted = 0
    for new, old in pairs:
        row = conn.execute("select c.text, c.embedded, c.text_hash, n.text_hash from chunks c, chunks n "
                           "where c.id = ? and n.id = ?", (old, new)).fetchone()
        if row is None:
            continue
        text, embedded, old_hash, new_hash = row
        if has_vec and embedded:
            if old_hash is not None and old_hash == new_hash:
                conn.execute("insert into chunk_vectors(id, embedding, text_hash) "
                             "select ?, embedding, text_hash from chunk_vectors where id = ?", (new, old))
                conn.execute("insert into chunk_vector_bits(id, bits) select ?, bits from chunk_vector_bits "
                             "where id = ?", (new, old))
                conn.execute("update chunks set embedded = 1 where id = ?", (new,))
                moved += 1
            conn.execute("delete from chunk_vector_bits where id = ?", (old,))
            conn.execute("delete from chunk_vectors where id = ?", (old,))
            deleted += 1
        conn.execute("insert into chunks_fts(chunks_fts, rowid, text) values('delete', ?, ?)", (old, text))
        conn.execute("delete from chunks_cjk where rowid = ?", (old,))
        conn.execute("update chunks set dup_of = ?, embedded = 0 where id = ? or dup_of = ?", (new, old, old))
    return moved, deleted
