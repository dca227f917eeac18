"""A library on a PostgreSQL server with the pgvector extension: the same store surface as the SQLite ``Store``
(store/protocol.py), so the service, ingest and retrieval run on it unchanged. psycopg 3 is imported only here."""
