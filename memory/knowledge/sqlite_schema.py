"""The knowledge base's SQLite schema: its version, the full-text tokenizer, and the tables
(`sqlite_backend.py` creates and migrates them)."""

SCHEMA_VERSION = 2  # 2: chunks.svec (sentence vectors)
TOKENIZE = "porter unicode61 remove_diacritics 2"  # the full-text index's; bm25.py tokenises queries alike

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY,
    doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    text TEXT NOT NULL,
    vec BLOB,
    svec BLOB
);
CREATE INDEX IF NOT EXISTS chunks_by_doc ON chunks(doc_id);
CREATE INDEX IF NOT EXISTS chunks_pending ON chunks(id) WHERE vec IS NULL;
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(body, tokenize = '{TOKENIZE}');
"""
