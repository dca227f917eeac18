"""The PostgreSQL library's schema, its version, and the checks made before a library is used.

Schema version: ``dm_schema.version`` is the number of migrations applied (``MIGRATIONS``). A library made by a
newer desktop-memory (a higher version) is refused in one sentence rather than misread; an older one is brought up
to date in one transaction under the writer lock, so two machines opening it at once migrate it once.

Words are indexed with the text search configuration ``dm_text``: PostgreSQL's default parser with the Snowball
English stemmer and *no* stopword list, so every word counts, as in the SQLite library's FTS5 index (porter
unicode61: stopwords are left out of a query, never of the index). Hyphenated words are indexed as their parts
(FTS5 splits at a hyphen too), and numbers as they are written.
"""

from __future__ import annotations

from typing import Any

import psycopg

from ...errors import StoreError
from ..location import redacted

Conn = psycopg.Connection[tuple[Any, ...]]

# (token types of PostgreSQL's default parser indexed through the English stemmer, and those kept as written);
# the compound forms of hyphenated words (asciihword, hword, numhword) are left out: their parts are indexed
_STEMMED = "asciiword, word, hword_asciipart, hword_part, numword, hword_numpart"
_AS_WRITTEN = "int, uint, float, sfloat, version, email, url, host, url_path, file"

MIGRATIONS: list[str] = [
    # 1: documents, chunks, word statistics for BM25, folders, exclusions, meta, vector model registry
    f"""
    CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);
    CREATE TABLE roots (path text COLLATE "C" PRIMARY KEY, added_at float8 NOT NULL, indexed_at float8);
    CREATE TABLE exclusions (path text COLLATE "C" PRIMARY KEY, root text NOT NULL, added_at float8 NOT NULL);
    CREATE TABLE documents (
        id bigserial PRIMARY KEY,
        path text COLLATE "C" NOT NULL UNIQUE,
        kind text NOT NULL DEFAULT '', language text, title text,
        size bigint NOT NULL DEFAULT 0, mtime float8 NOT NULL DEFAULT 0,
        content_hash text NOT NULL DEFAULT '', status text NOT NULL, error text NOT NULL DEFAULT '',
        n_chunks integer NOT NULL DEFAULT 0, n_dups integer NOT NULL DEFAULT 0, indexed_at float8 NOT NULL DEFAULT 0
    );
    CREATE INDEX documents_status ON documents(status);
    CREATE TABLE chunks (
        id bigserial PRIMARY KEY,  -- never reused: a stale vector cannot land on new text
        doc_id bigint NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        ord integer NOT NULL, text text NOT NULL, heading_path text NOT NULL DEFAULT '',
        page integer, line_start integer, line_end integer, char_start integer NOT NULL, char_end integer NOT NULL,
        dedupe_key text NOT NULL DEFAULT '', dup_of bigint, embedded boolean NOT NULL DEFAULT false,
        text_hash bytea,
        n_words integer NOT NULL DEFAULT 0,  -- tokens of a canonical chunk (BM25's document length)
        n_grams integer NOT NULL DEFAULT 0,  -- bigrams of its no-space text (store/cjk.py)
        tsv tsvector                         -- canonical chunks: positions for phrases (keyword.py)
    );
    CREATE INDEX chunks_doc ON chunks(doc_id, ord);
    CREATE INDEX chunks_dedupe ON chunks(dedupe_key) WHERE dup_of IS NULL;
    CREATE INDEX chunks_dup_of ON chunks(dup_of) WHERE dup_of IS NOT NULL;
    CREATE INDEX chunks_pending ON chunks(id) WHERE NOT embedded AND dup_of IS NULL;
    -- the term statistics BM25 is scored from: lane 0 = words (dm_text), 1 = bigrams of no-space scripts
    -- (tf; dl: the chunk's length in the lane, copied here so BM25 reads the index alone: no join per posting)
    CREATE TABLE chunk_terms (
        lane smallint NOT NULL, term text NOT NULL,
        chunk_id bigint NOT NULL, tf integer NOT NULL, dl integer NOT NULL,
        PRIMARY KEY (lane, term, chunk_id) INCLUDE (tf, dl)
    );  -- no foreign key or chunk_id index (~60 rows a passage: each index is insertion time); terms.py deletes
    CREATE TABLE vector_models (
        model_id text PRIMARY KEY, dim integer NOT NULL, slot integer NOT NULL UNIQUE, settings text,
        added_at float8 NOT NULL
    );
    CREATE TEXT SEARCH DICTIONARY dm_english_stem (TEMPLATE = snowball, Language = english);
    CREATE TEXT SEARCH CONFIGURATION dm_text (COPY = pg_catalog.simple);
    ALTER TEXT SEARCH CONFIGURATION dm_text DROP MAPPING FOR asciihword, hword, numhword;
    ALTER TEXT SEARCH CONFIGURATION dm_text ALTER MAPPING FOR {_STEMMED} WITH dm_english_stem;
    ALTER TEXT SEARCH CONFIGURATION dm_text ALTER MAPPING FOR {_AS_WRITTEN} WITH simple;
    """,
    # 2: machines (issue 32 item 3), as the SQLite library's migration of the same name: each library folder
    # belongs to the machine that added it (its id from that machine's config folder, its readable name as last
    # said); '' = not recorded (a folder every machine treats as its own until one adds it again and claims it)
    """
    ALTER TABLE roots ADD COLUMN machine_id text NOT NULL DEFAULT '',
                      ADD COLUMN machine_name text NOT NULL DEFAULT '';
    """,
    # 3: the word statistics as segments, one row per term per write (postings.py) instead of one per term per
    # passage: the rows of each term regrouped by ranges of 4,096 chunk ids, as ``compact`` merges them
    """
    CREATE TABLE term_postings (
        lane smallint NOT NULL, term text NOT NULL,
        first_id bigint NOT NULL, last_id bigint NOT NULL,  -- bounds of the segment's chunk ids
        n integer NOT NULL,                                 -- its postings (a document frequency reads no array)
        postings bigint[] NOT NULL                          -- chunk id << 25 | tf << 16 | dl
    );
    ALTER TABLE term_postings ALTER COLUMN postings SET STORAGE EXTERNAL;  -- out of line, never compressed
    INSERT INTO term_postings
        SELECT lane, term, min(chunk_id), max(chunk_id), count(*),
               array_agg((chunk_id << 25) | (least(tf, 511)::bigint << 16) | least(dl, 65535) ORDER BY chunk_id)
        FROM chunk_terms GROUP BY lane, term, chunk_id >> 12;
    DROP TABLE chunk_terms;
    CREATE INDEX term_postings_term ON term_postings(lane, term, first_id);
    CREATE INDEX term_postings_small ON term_postings(first_id) WHERE n < 64;  -- merged behind the writes
    INSERT INTO meta(key, value) SELECT 'postings_merged_bucket', ((max(id) >> 12) - 1)::text FROM chunks
        HAVING count(*) > 0;  -- the buckets regrouped above count as merged
    -- passages a bulk load's second connection tokenized ahead of their write (tokens_ahead.py): never WAL-logged,
    -- each batch deleted by the write that takes it over
    CREATE UNLOGGED TABLE token_stage (batch text NOT NULL, i integer NOT NULL, id bigint NOT NULL,
                                       tsv tsvector NOT NULL, n_words integer NOT NULL)
        WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 20000);  -- rows come and go
    CREATE INDEX token_stage_batch ON token_stage(batch, i);  -- a batch is found without reading the dead ones
    -- and the same batch's word segments, under the chunk ids taken for it ahead
    CREATE UNLOGGED TABLE segment_stage (batch text NOT NULL, term text NOT NULL, first_id bigint NOT NULL,
                                         last_id bigint NOT NULL, n integer NOT NULL, postings bigint[] NOT NULL)
        WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 20000);
    CREATE INDEX segment_stage_batch ON segment_stage(batch);
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)


def current_version(conn: Conn) -> int:
    """The library's schema version (0: no library here yet)."""
    row = conn.execute("select to_regclass('dm_schema') is not null").fetchone()
    if not row or not row[0]:
        return 0
    got = conn.execute("select version from dm_schema").fetchone()
    return int(str(got[0])) if got else 0


def check_vector_extension(conn: Conn, url: str, *, create: bool) -> None:
    """pgvector must be installed on the server and enabled in the database (created when allowed)."""
    have = conn.execute("select 1 from pg_extension where extname = 'vector'").fetchone()
    if have:
        return
    available = conn.execute("select 1 from pg_available_extensions where name = 'vector'").fetchone()
    if not available:
        raise StoreError(f"The PostgreSQL server of {redacted(url)} has no pgvector extension; install pgvector "
                         "on the server (https://github.com/pgvector/pgvector) and try again.")
    if not create:
        raise StoreError(f"The database {redacted(url)} does not have the pgvector extension enabled; run "
                         "`CREATE EXTENSION vector;` in it as its owner.")
    try:
        conn.execute("create extension if not exists vector")
    except psycopg.errors.InsufficientPrivilege as exc:
        raise StoreError(f"The database {redacted(url)} does not have the pgvector extension enabled and this role "
                         "may not enable it; run `CREATE EXTENSION vector;` in it as its owner.") from exc


def migrate(conn: Conn, url: str) -> None:
    """Bring the schema to SCHEMA_VERSION in one transaction under the writer lock (another machine opening the
    library at the same time waits, then finds it done)."""
    from .connection import write_tx

    with write_tx(conn, url):
        conn.execute("create table if not exists dm_schema (version integer not null)")
        version = current_version(conn)
        if version > SCHEMA_VERSION:
            return  # refused by check_version after the transaction
        if not conn.execute("select 1 from dm_schema").fetchone():
            conn.execute("insert into dm_schema(version) values (0)")
        for step in MIGRATIONS[version:]:
            conn.execute(step.encode())
        conn.execute("update dm_schema set version = %s", (SCHEMA_VERSION,))


def check_version(conn: Conn, url: str) -> None:
    """A library made by a newer desktop-memory is refused, whole."""
    version = current_version(conn)
    if version > SCHEMA_VERSION:
        raise StoreError(f"The library at {redacted(url)} was made by a newer desktop-memory (schema {version}, "
                         f"this one knows {SCHEMA_VERSION}); update desktop-memory to open it.")
