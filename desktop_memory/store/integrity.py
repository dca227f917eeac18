"""``desktop-memory check``: the Store's consistency checks (``Store.check_integrity``). Used by tests
after kill -9 too. Every check is a read: on a database opened read-only, FTS5's own self-check (an INSERT) is
skipped."""

from __future__ import annotations

import apsw

from ..models import chunk_text_hash
from . import migrations as _migrations
from .rows import scalar, scalar_int
from .vector_rows import VectorRows
from .vectors import code_bytes


class IntegrityChecks:
    """Consistency checks over documents, chunks, FTS rows and vectors of one connection."""

    def __init__(self, conn: apsw.Connection, mode: str | None, vectors: VectorRows) -> None:
        self.conn = conn
        self.mode = mode  # read-only / disk-full mode (store/readonly.py), None when writable
        self.vectors = vectors

    def check_integrity(self) -> list[str]:
        """Consistency problems (empty list = healthy). Used by tests after kill -9 and by `desktop-memory check`."""
        problems = []
        ok = scalar(self.conn, "pragma integrity_check")
        if ok != "ok":
            problems.append(f"integrity_check: {ok}")
        problems += _migrations.schema_problems(self.conn)
        if problems:
            return problems  # the checks below would only fail on what is missing
        if not self.mode:  # FTS5's self-check is an INSERT: it cannot run on a database opened read-only
            try:
                # Internal consistency only: rank=1 would also compare against the content table, where collapsed
                # duplicates deliberately have no FTS row.
                self.conn.execute("insert into chunks_fts(chunks_fts) values('integrity-check')")
            except apsw.Error as exc:
                problems.append(f"fts integrity: {exc}")
        fts_rows = scalar_int(self.conn, "select count(*) from chunks_fts_docsize")
        canon = scalar_int(self.conn, "select count(*) from chunks where dup_of is null")
        if fts_rows != canon:
            problems.append(f"fts rows {fts_rows} != canonical chunks {canon}")
        problems += self._check_vectors()
        return problems

    def _check_vectors(self) -> list[str]:
        problems = []
        orphans = scalar_int(
            self.conn,
            "select count(*) from chunk_vectors v where not exists "
            "(select 1 from chunks c where c.id = v.id and c.embedded = 1 and c.dup_of is null)"
        )
        if orphans:
            problems.append(f"{orphans} vectors without a live embedded chunk")
        vecs = scalar_int(self.conn, "select count(*) from chunk_vectors")
        flagged = scalar_int(self.conn, "select count(*) from chunks where embedded=1")
        if vecs != flagged:
            problems.append(f"vectors {vecs} != chunks flagged embedded {flagged}")
        unpaired = scalar_int(
            self.conn,
            "select (select count(*) from chunk_vectors v where not exists "
            "        (select 1 from chunk_vector_bits b where b.id = v.id)) + "
            "       (select count(*) from chunk_vector_bits b where not exists "
            "        (select 1 from chunk_vectors v where v.id = b.id))"
        )
        if unpaired:
            problems.append(f"{unpaired} vectors and sign-bit rows do not pair up")
        problems += self.check_vector_identity()
        model, dim = self.vectors.model_info()
        if vecs and model is None:
            problems.append(f"{vecs} vectors stored but no model recorded")
        if dim:
            bad = scalar_int(
                self.conn,
                "select (select count(*) from chunk_vectors where length(embedding) != ?) + "
                "(select count(*) from chunk_vector_bits where length(bits) != ?)",
                (4 * dim, code_bytes(dim)),
            )
            if bad:
                problems.append(f"{bad} vectors or bit-code rows have the wrong size for {dim} dimensions")
        return problems


    def check_vector_identity(self) -> list[str]:
        """Every vector was computed from exactly its chunk's text: the hash recorded with the vector equals the
        chunk's text hash, and the chunk's hash is the hash of its text (one pass, no model)."""
        problems = []
        wrong = scalar_int(
            self.conn,
            "select count(*) from chunk_vectors v join chunks c on c.id = v.id "
            "where v.text_hash is null or v.text_hash is not c.text_hash"
        )
        if wrong:
            problems.append(f"{wrong} vectors were computed from another text than their chunk's "
                            "(run `desktop-memory reembed`)")
        stale = sum(1 for text, h in self.conn.execute("select text, text_hash from chunks")
                    if h != chunk_text_hash(text))
        if stale:
            problems.append(f"{stale} chunks have a text hash that does not match their text")
        return problems
