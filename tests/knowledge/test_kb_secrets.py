"""`arreio kb add` keeps no secret: a document's text goes through the redactor before it is chunked,
so `knowledge.sqlite` (and its write-ahead log) holds the labels, never a `db_password: …` value, a
GitHub token, a docker `auth` or an environment secret in any spelling. A real `arreio` process, the
database read back with `sqlite3` and as bytes. A knowledge base an older arreio filled as read is
redacted in place on the next write, the old text overwritten on disk."""

from __future__ import annotations

import base64
import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from arreio.memory.knowledge.chunking import chunk_text
from arreio.memory.knowledge.sqlite_backend import SqliteBackend
from tests.conftest import ARREIO

PASSWORD = "hunter2-staging-7731"
GHO = "gho_16C7e42F292c6912E7710c838347Ae178B4a"
DOCKER_AUTH = base64.b64encode(b"octocat:Zr9vK2mQ7xLp4sWt").decode()
ENV_KEY = "Xq7vN2pL9rT4wK8mB3cD6fGh1jZ5"  # in the environment only: no format marks it


def _notes() -> dict[str, str]:
    return {
        "staging.md": (
            f"# Staging\n\nThe app reads its settings from env.\n\ndb_password: {PASSWORD}\nhost: db.staging\n"
        ),
        "gh.md": f"# GitHub CLI\n\n`gh auth token` printed {GHO} on the build box.\n",
        "docker.json": json.dumps({"auths": {"ghcr.io": {"auth": DOCKER_AUTH}}}, indent=2),
        "vendor.md": "# Vendor API\n\nOur key, base64 for the header: "
        f"{base64.b64encode(ENV_KEY.encode()).decode()}\nand as is: {ENV_KEY}\n",
    }


def _kb(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "ARREIO_HOME": str(tmp_path / "state"),
        "ARREIO_KB_EMBEDDER": "hashing",
        "VENDOR_API_KEY": ENV_KEY,
    }
    return subprocess.run(
        [*ARREIO, "kb", *args], cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=120
    )


def _leaks(state: Path) -> dict[str, list[str]]:
    secrets = [PASSWORD, GHO, DOCKER_AUTH, ENV_KEY, base64.b64encode(ENV_KEY.encode()).decode()[:24]]
    out = {}
    for path in sorted(p for p in state.rglob("*") if p.is_file()):
        data = path.read_bytes()
        found = [s[:8] for s in secrets if s.encode() in data]
        if found:
            out[path.name] = found
    return out


@pytest.mark.slow
def test_kb_add_stores_no_secret_in_any_spelling(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in _notes().items():
        (docs / name).write_text(text, encoding="utf-8")
    added = _kb(tmp_path, "add", "docs")
    assert added.returncode == 0, added.stderr
    state = tmp_path / "state"
    assert _leaks(state) == {}
    with sqlite3.connect(state / "knowledge.sqlite") as db:
        texts = "\n".join(text for (text,) in db.execute("SELECT text FROM chunks"))
        vectors = db.execute("SELECT COUNT(*) FROM chunks WHERE vec IS NOT NULL").fetchone()[0]
    assert "db_password: [REDACTED]" in texts and "printed [REDACTED] on the build box" in texts
    assert '"auth": "[REDACTED]"' in texts and "as is: [REDACTED:VENDOR_API_KEY]" in texts
    assert "host: db.staging" in texts and vectors > 0  # the rest is kept, and embedded
    found = _kb(tmp_path, "search", "staging database password", "--json")
    assert "[REDACTED]" in found.stdout and PASSWORD not in found.stdout


@pytest.mark.slow
def test_a_knowledge_base_filled_as_read_is_redacted_on_the_next_write(tmp_path: Path) -> None:
    state = tmp_path / "state"
    old = SqliteBackend(state / "knowledge.sqlite")  # as an older arreio left it: text as read
    for name, text in _notes().items():
        old.replace_document(str(tmp_path / "old" / name), "0" * 64, len(text), chunk_text(text))
    old._db.execute("DELETE FROM meta WHERE key = 'redacted'")
    old.close()
    assert _leaks(state)  # the raw text is there

    (tmp_path / "new.md").write_text("# New\n\nNothing secret here.\n", encoding="utf-8")
    added = _kb(tmp_path, "add", "new.md")
    assert added.returncode == 0, added.stderr
    assert _leaks(state) == {}  # rows, the full-text index, freed pages and the WAL
    with sqlite3.connect(state / "knowledge.sqlite") as db:
        texts = "\n".join(text for (text,) in db.execute("SELECT text FROM chunks"))
        pending = db.execute("SELECT COUNT(*) FROM chunks WHERE vec IS NULL").fetchone()[0]
    assert "db_password: [REDACTED]" in texts and pending == 0  # the changed chunks embedded again
