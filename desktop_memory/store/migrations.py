"""Numbered schema migrations tracked by ``PRAGMA user_version``.

A database from a newer desktop-memory is refused with a clear message (we never guess at a schema we do not know).
Before migrating an existing database to a newer schema, a copy is written beside it (``<name>.bak-v<N>``).
Vectors live in plain tables (migration 2); the model id and dimension are recorded in ``meta`` when the first
model is chosen (see ``repository.Store.ensure_model``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import apsw

from ..errors import DatabaseDamaged, NotOurDatabase, StoreError
from ..models import chunk_text_hash
from ..private_files import create_private_file
from .sql_values import as_bytes, as_int, as_str, scalar_int

# SQL scripts, or callables taking the connection (run inside the step's transaction)
MIGRATIONS: list[str | Callable[[apsw.Connection], None]] = [
    # 1: documents, chunks, external-content FTS5 over chunk text, meta.
    """
    CREATE TABLE meta (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    CREATE TABLE roots (
        path        TEXT PRIMARY KEY,
        added_at    REAL NOT NULL,
        indexed_at  REAL
    );
    CREATE TABLE documents (
        id           INTEGER PRIMARY KEY,
        path         TEXT NOT NULL UNIQUE,
        kind         TEXT NOT NULL DEFAULT '',
        language     TEXT,
        title        TEXT,
        size         INTEGER NOT NULL DEFAULT 0,
        mtime        REAL NOT NULL DEFAULT 0,
        content_hash TEXT NOT NULL DEFAULT '',
        status       TEXT NOT NULL,
        error        TEXT NOT NULL DEFAULT '',
        n_chunks     INTEGER NOT NULL DEFAULT 0,
        n_dups       INTEGER NOT NULL DEFAULT 0,
        indexed_at   REAL NOT NULL DEFAULT 0
    );
    CREATE INDEX documents_status ON documents(status);
    CREATE TABLE chunks (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: a stale vector can't land on new text
        doc_id       INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        ord          INTEGER NOT NULL,
        text         TEXT NOT NULL,
        heading_path TEXT NOT NULL DEFAULT '',
        page         INTEGER,
        line_start   INTEGER,
        line_end     INTEGER,
        char_start   INTEGER NOT NULL,
        char_end     INTEGER NOT NULL,
        dedupe_key   TEXT NOT NULL DEFAULT '',
        dup_of       INTEGER,
        embedded     INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX chunks_doc ON chunks(doc_id, ord);
    CREATE INDEX chunks_dedupe ON chunks(dedupe_key) WHERE dup_of IS NULL;
    CREATE INDEX chunks_dup_of ON chunks(dup_of) WHERE dup_of IS NOT NULL;
    CREATE INDEX chunks_pending ON chunks(id) WHERE embedded = 0 AND dup_of IS NULL;
    CREATE VIRTUAL TABLE chunks_fts USING fts5(
        text, content='chunks', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2'
    );
    """,
]



def _migration_2(conn: apsw.Connection) -> None:
    """Dense vectors leave the float vec0 table for two plain tables keyed by chunk id.

    ``chunk_vectors`` holds each float32 unit vector as a BLOB (fetching a few thousand by primary key for exact
    re-scoring costs ~2 ms; a vec0 point lookup costs ~200 µs each). ``chunk_vector_bits`` holds its sign bits
    (dim/8 bytes) for the coarse stage of the dense lane (see ``retrieve/dense.py``). Existing vectors are moved
    over, so nothing needs re-embedding.
    """
    conn.execute(
        """
        CREATE TABLE chunk_vectors (
            id        INTEGER PRIMARY KEY,  -- chunks.id of a live, canonical, embedded chunk
            embedding BLOB NOT NULL         -- float32 little-endian, unit length, meta.dim values
        );
        CREATE TABLE chunk_vector_bits (
            id   INTEGER PRIMARY KEY,       -- same ids as chunk_vectors
            bits BLOB NOT NULL              -- sign bits of the embedding, little bit order, ceil(dim/8) bytes
        );
        """
    )
    if conn.execute("select 1 from sqlite_master where name='chunks_vec'").fetchone() is None:
        return
    import numpy as np

    from .vectors import sign_bits  # numpy: imported only when there is something to convert

    conn.execute("insert into chunk_vectors(id, embedding) select rowid, embedding from chunks_vec")
    after = 0
    while True:
        rows = conn.execute(
            "select id, embedding from chunk_vectors where id > ? order by id limit 4096", (after,)
        ).fetchall()
        if not rows:
            break
        after = as_int(rows[-1][0])
        blobs = [as_bytes(r[1]) for r in rows]
        dim = len(blobs[0]) // 4
        mat = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(rows), dim)
        bits = sign_bits(mat)
        conn.executemany("insert into chunk_vector_bits(id, bits) values(?, ?)",
                         [(r[0], bits[i].tobytes()) for i, r in enumerate(rows)])
    conn.execute("drop table chunks_vec")


MIGRATIONS.append(_migration_2)


def _migration_cjk(conn: apsw.Connection) -> None:
    """Bigram keyword index for text written without spaces (CJK, Thai ...): ``chunks_cjk`` (see ``store/cjk.py``).

    Filled from the existing canonical chunks that hold such text; an English library gets an empty table."""
    from .cjk import CREATE_TABLE, grams_text

    conn.execute(CREATE_TABLE)
    # like chunks_fts (privacy): a removed chunk's grams leave the index segments instead of lingering there
    conn.execute("insert into chunks_cjk(chunks_cjk, rank) values('secure-delete', 1)")
    after = 0
    while True:
        rows = conn.execute(
            "select id, text from chunks where dup_of is null and id > ? order by id limit 2048", (after,)
        ).fetchall()
        if not rows:
            break
        after = as_int(rows[-1][0])
        grams = [(cid, grams_text(as_str(text))) for cid, text in rows]
        conn.executemany("insert into chunks_cjk(rowid, grams) values(?, ?)", [g for g in grams if g[1]])


MIGRATIONS.append(_migration_cjk)


def _migration_secure_delete(conn: apsw.Connection) -> None:
    """FTS5 removes a deleted chunk's terms from its index segments instead of adding a tombstone beside them.

    Without it the words of a removed document stay readable in ``chunks_fts_data`` until a later merge. The
    option is persistent (stored in ``chunks_fts_config``), so it is set once here and opening never writes.
    Segments written before this option keep older deletions until ``desktop-memory compact`` rebuilds them.
    """
    conn.execute("insert into chunks_fts(chunks_fts, rank) values('secure-delete', 1)")


MIGRATIONS.append(_migration_secure_delete)  # privacy (issue 16): keep it after the others' migrations


def _sql_text_hash(*values: apsw.SQLiteValue) -> apsw.SQLiteValue:
    return chunk_text_hash(str(values[0]))


def _migration_text_hash(conn: apsw.Connection) -> None:
    """Vector identity: ``chunks.text_hash`` is the hash of the chunk's exact text, ``chunk_vectors.text_hash`` the
    hash of the text the vector was computed from. They must be equal: promotion of a duplicate and vector reuse
    only move a vector to a chunk with the same hash, and ``check`` compares them (one join, no model needed).
    Existing rows get their chunk's hash (what their vectors were computed from cannot be known afterwards;
    ``desktop-memory reembed`` recomputes every vector)."""
    for table in ("chunks", "chunk_vectors"):  # idempotent: a schema rolled back and migrated again keeps working
        if "text_hash" not in {row[1] for row in conn.execute(f"pragma table_info({table})")}:
            conn.execute(f"alter table {table} add column text_hash blob")
    conn.create_scalar_function("dm_text_hash", _sql_text_hash, 1, deterministic=True)
    conn.execute("update chunks set text_hash = dm_text_hash(text)")
    conn.execute("update chunk_vectors set text_hash = "
                 "(select c.text_hash from chunks c where c.id = chunk_vectors.id)")


MIGRATIONS.append(_migration_text_hash)  # badinput (issue 11)

# The folder of a document as the Library groups it: the path up to and including its last separator ('/' or '\'),
# from built-in deterministic functions only, so an index on it needs nothing registered on any connection.
FOLDER_KEY = r"rtrim(path, replace(replace(path, '/', ''), '\', ''))"

# Library listing (issue 26): a folder's documents are one range of this index in name order, and the per-folder
# counts a group-by over it that never reads the table (the summed columns are in the index).
MIGRATIONS.append(f"""
    CREATE INDEX IF NOT EXISTS documents_folder ON documents(
        {FOLDER_KEY}, path COLLATE NOCASE, status, n_chunks, size, mtime, indexed_at);
""")

def _migration_bit_codes(conn: apsw.Connection) -> None:
    """Each vector's sign bits become its 2-bit code: the sign plane followed by a magnitude plane (bit i set iff
    |component i| exceeds the median |component| of that vector; see ``store/vectors.py``). The dense lane ranks its
    Hamming shortlist with both planes, so at a million vectors it re-scores a few hundred floats, not 20,000.
    Every existing code is recomputed from its own stored float vector (no re-embedding)."""
    import numpy as np

    from .vectors import bit_codes

    dim = scalar_int(conn, "select coalesce((select cast(value as integer) from meta where key = 'dim'), 0)")
    after = 0
    while dim > 0:
        rows = conn.execute(
            "select id, embedding from chunk_vectors where id > ? order by id limit 4096", (after,)
        ).fetchall()
        if not rows:
            break
        after = as_int(rows[-1][0])
        rows = [r for r in rows if len(as_bytes(r[1])) == 4 * dim]  # a damaged row is left for `check` to report
        if not rows:
            continue
        mat = np.frombuffer(b"".join(as_bytes(r[1]) for r in rows), dtype="<f4").reshape(len(rows), dim)
        codes = bit_codes(mat)
        conn.executemany("update chunk_vector_bits set bits = ? where id = ?",
                         [(codes[i].tobytes(), r[0]) for i, r in enumerate(rows)])


MIGRATIONS.append(_migration_bit_codes)  # dense (issue 26)

# Exclusions (issue 30 item 4): a folder or file inside a library folder that the person removed. The watcher, the
# catch-up at start, a re-read (F5) and every walk of its library folder leave it out, so a removal stays removed;
# naming it explicitly (`index PATH`, a drop, "Include again", `include PATH`) lifts it. ``root`` is the library
# folder it was removed from (an exclusion goes when that folder leaves the library).
_MIGRATION_EXCLUSIONS = """
    CREATE TABLE IF NOT EXISTS exclusions (
        path     TEXT PRIMARY KEY,
        root     TEXT NOT NULL,
        added_at REAL NOT NULL
    );
"""
MIGRATIONS.append(_MIGRATION_EXCLUSIONS)  # removal (issue 30); the switch's migration is appended after this one

def _migration_model_sets(conn: apsw.Connection) -> None:
    """Vectors of several models side by side (issue 30, "a model switch that loses nothing"): the
    ``vector_models`` registry; the recorded model's vectors stay where they are, as its active set
    (``store/model_sets.py``)."""
    from .model_sets import migrate_model_sets

    migrate_model_sets(conn)


MIGRATIONS.append(_migration_model_sets)  # switch (issue 30): appended after the removal migration at merge

# Machines (issue 32 item 3): a library shared by several machines; each library folder belongs to the machine that
# added it (its id from that machine's config folder, and its readable name as last said). Documents say their
# machine through the folder that holds them. '' = added before machines were recorded: every machine treats such
# a folder as its own (a single-machine library behaves as before) until one adds it again and claims it.
def _migration_machines(conn: apsw.Connection) -> None:
    """``roots.machine_id`` and ``roots.machine_name`` (idempotent: a column already there is kept)."""
    have = {as_str(row[1]) for row in conn.execute("pragma table_info(roots)")}
    for column in ("machine_id", "machine_name"):
        if column not in have:
            conn.execute(f"alter table roots add column {column} TEXT NOT NULL DEFAULT ''")


MIGRATIONS.append(_migration_machines)

SCHEMA_VERSION = len(MIGRATIONS)

# What each schema version must contain: {version: {table: required columns}}. Checked on every open, before
# anything is written, so a dropped table or column is reported as damage instead of failing deep in a query.
# A later migration that adds tables or columns adds its entry here.
REQUIRED_SCHEMA: dict[int, dict[str, tuple[str, ...]]] = {
    1: {
        "meta": ("key", "value"),
        "roots": ("path",),
        "documents": ("id", "path", "kind", "size", "mtime", "content_hash", "status", "error", "n_chunks"),
        "chunks": ("id", "doc_id", "ord", "text", "heading_path", "char_start", "char_end", "dedupe_key", "dup_of",
                   "embedded"),
        "chunks_fts": (),
    },
    2: {"chunk_vectors": ("id", "embedding"), "chunk_vector_bits": ("id", "bits")},
    MIGRATIONS.index(_migration_cjk) + 1: {"chunks_cjk": ()},
    MIGRATIONS.index(_migration_text_hash) + 1: {"chunks": ("text_hash",), "chunk_vectors": ("text_hash",)},
    MIGRATIONS.index(_MIGRATION_EXCLUSIONS) + 1: {"exclusions": ("path", "root", "added_at")},
    MIGRATIONS.index(_migration_model_sets) + 1: {"vector_models": ("model_id", "dim", "slot", "settings")},
    MIGRATIONS.index(_migration_machines) + 1: {"roots": ("machine_id", "machine_name")},
}


def schema_problems(conn: apsw.Connection) -> list[str]:
    """What is missing from the schema its ``user_version`` promises (empty = intact). Reads only."""
    version = current_version(conn)
    if version < 0:
        return [f"its schema version is {version}, which no desktop-memory writes"]
    problems: list[str] = []
    tables = {name: sql or "" for name, sql in conn.execute(
        "select name, sql from sqlite_master where type = 'table'")}
    for number in range(1, min(version, SCHEMA_VERSION) + 1):
        for table, columns in REQUIRED_SCHEMA.get(number, {}).items():
            if table not in tables:
                problems.append(f"table {table} is missing")
                continue
            if not columns or "virtual table" in tables[table].lower():
                continue
            have = {row[1] for row in conn.execute(f'pragma table_info("{table}")')}
            missing = [c for c in columns if c not in have]
            if missing:
                problems.append(f"table {table} lacks column(s) {', '.join(missing)}")
    return problems


def preflight(conn: apsw.Connection, db_path: Path) -> None:
    """Refuse, before anything is written, a file that is not ours, is newer, or is damaged.

    Runs right after opening, before the switch to WAL (which would rewrite the header of someone else's file and
    bump its change counter): only reads the schema and ``user_version``."""
    version = current_version(conn)
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"The database {db_path} was written by a newer desktop-memory (schema {version}; this version "
            f"understands up to {SCHEMA_VERSION}). Update desktop-memory, or choose another database file."
        )
    if version == 0:
        if has_tables(conn):
            raise NotOurDatabase(f"{db_path} is an SQLite file but not a desktop-memory database; choose another file.")
        return
    problems = schema_problems(conn)
    if problems:
        raise DatabaseDamaged(Path(db_path), problems)


def current_version(conn: apsw.Connection) -> int:
    return scalar_int(conn, "pragma user_version")


def has_tables(conn: apsw.Connection) -> bool:
    return scalar_int(conn, "select count(*) from sqlite_master where type='table'") > 0


def backup_before_migrating(conn: apsw.Connection, db_path: Path, version: int) -> Path | None:
    """Copy the database (via SQLite's backup API, so WAL content is included) before changing its schema."""
    if str(db_path) in ("", ":memory:"):
        return None
    target = db_path.with_name(f"{db_path.name}.bak-v{version}")
    create_private_file(target)  # 0600 before a byte of the memory is copied into it
    tmp = apsw.Connection(str(target))
    try:
        with tmp.backup("main", conn, "main") as b:
            while not b.done:
                b.step(1024)
    finally:
        tmp.close()
    return target


def migrate(conn: apsw.Connection, db_path: Path) -> int:
    """Bring the schema to SCHEMA_VERSION; refuse a newer one. Returns the version now in force."""
    version = current_version(conn)
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"The database {db_path} was written by a newer desktop-memory (schema {version}; this version "
            f"understands up to {SCHEMA_VERSION}). Update desktop-memory, or choose another database file."
        )
    if version == SCHEMA_VERSION:
        return version
    if version < 0:
        raise DatabaseDamaged(Path(db_path), schema_problems(conn))
    if version > 0 or has_tables(conn):
        if version == 0:
            raise NotOurDatabase(f"{db_path} is an SQLite file but not a desktop-memory database; choose another file.")
        backup_before_migrating(conn, db_path, version)
    for number in range(version, SCHEMA_VERSION):
        with conn:  # each step atomic: a crash mid-migration leaves the previous version intact
            step = MIGRATIONS[number]
            if callable(step):
                step(conn)
            else:
                conn.execute(step)
            conn.execute(f"pragma user_version={number + 1}")
    return SCHEMA_VERSION
