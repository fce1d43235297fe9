"""The knowledge base's one file in the state directory, and whether it holds anything.

Apart from the index so that a run can ask "is there a knowledge base?" without loading it: every
run asks, few have one."""

from __future__ import annotations

from pathlib import Path

DB_NAME = "knowledge.sqlite"


def has_documents(state_dir: Path) -> bool:
    """True when `state_dir/knowledge.sqlite` exists and holds a document. Never creates it."""
    db = state_dir / DB_NAME
    if not db.is_file():
        return False
    import sqlite3

    try:
        connection = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
        try:
            return connection.execute("SELECT 1 FROM documents LIMIT 1").fetchone() is not None
        finally:
            connection.close()
    except sqlite3.Error:
        return False
