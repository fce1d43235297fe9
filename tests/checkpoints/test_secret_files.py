"""Checkpoints never copy a secrets file (`.env`, a private key, credentials): the shadow store kept
a `.env` the agent wrote for as long as the run's checkpoints lived (the newest run of a folder: for
ever), past the secret's rotation or the file's removal. Such a file is left out and named at once
and in the report, as a file `.gitignore` keeps out is; everything else is checkpointed and undone as
before. Real files, real git (every object the store holds is read back), scripted runs through the
real CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from arreio.engine.checkpoints.index import CheckpointIndex
from arreio.engine.checkpoints.recorder import Recorder
from arreio.engine.checkpoints.secret_files import is_secret_file
from arreio.engine.checkpoints.store import ShadowRepo
from arreio.engine.providers.testing import FixedClock
from tests.checkpoints.conftest import scripted

PASSWORD = "hunter2-Xk9mQ2vL7pRt"
KEY_LINE = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj"
PRIVATE_KEY = f"-----BEGIN PRIVATE KEY-----\n{KEY_LINE}\n-----END PRIVATE KEY-----\n"
CERT = "-----BEGIN CERTIFICATE-----\nMIIC+TCCAeGgAwIBAgIUcertificatebodyonly\n-----END CERTIFICATE-----\n"
NOT_CHECKPOINTED = "not checkpointed, so `arreio undo` cannot restore them"


def _yaml(text: str) -> str:
    return text.replace("\n", "\\n")


WRITES = f"""\
- tool_calls:
  - {{name: write_file, arguments: {{path: .env, content: "DB_PASSWORD={PASSWORD}\\n"}}}}
  - {{name: write_file, arguments: {{path: deploy/key.pem, content: "{_yaml(PRIVATE_KEY)}"}}}}
  - {{name: write_file, arguments: {{path: deploy/cert.pem, content: "{_yaml(CERT)}"}}}}
  - {{name: write_file, arguments: {{path: .env.example, content: "DB_PASSWORD=\\n"}}}}
  - {{name: write_file, arguments: {{path: a.txt, content: "changed\\n"}}}}
- tool_calls:
  - {{name: shell, arguments: {{command: "printf 'machine api.example.com password {PASSWORD}\\\\n' > .netrc"}}}}
- text: done
"""


def _objects(state: Path) -> bytes:
    """Every object of the shadow store, decompressed (loose and packed alike)."""
    git = shutil.which("git") or "git"
    env = {"GIT_DIR": str(state / "checkpoints" / "git"), "PATH": os.environ.get("PATH", ""), "HOME": str(state)}
    return subprocess.run(
        [git, "cat-file", "--batch-all-objects", "--batch"], env=env, capture_output=True, check=True
    ).stdout


def test_a_secrets_file_the_agent_writes_is_never_copied_and_is_named(work: Path, cli) -> None:
    (work / "a.txt").write_text("hi\n")
    (work / ".gitignore").write_text("s.yaml\n")  # the test's script (it holds the password); nothing else
    result, events, report = scripted(cli, work, WRITES)
    assert result.exit_code == 0, result.stdout
    stored = _objects(work / ".arreio")
    assert PASSWORD.encode() not in stored and KEY_LINE.encode() not in stored
    assert b"MIIC+TCCAeGgAwIBAgIUcertificatebodyonly" in stored and b"changed" in stored  # the rest is kept
    assert sorted(report["checkpoint_skipped"]) == [".env", ".netrc", "deploy/key.pem"]
    assert sorted(report["changes"]["created"]) == [".env.example", "deploy/cert.pem"]
    said = " ".join(
        e["message"]
        for e in events
        if e["type"] == "warning" and (NOT_CHECKPOINTED in e["message"] or "undo will not remove" in e["message"])
    )
    assert ".env (a secrets file: never copied into checkpoints)" in said and ".netrc (a secrets file" in said
    undone = cli("undo", "--yes")
    assert undone.exit_code == 0, undone.stdout
    assert (work / "a.txt").read_text() == "hi\n" and not (work / "deploy" / "cert.pem").exists()
    assert (work / ".env").read_text() == f"DB_PASSWORD={PASSWORD}\n"  # as the warning said: left as it is


def test_a_copy_an_older_arreio_kept_leaves_the_next_checkpoint(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / ".env").write_text(f"DB_PASSWORD={PASSWORD}\n")
    (work / "a.txt").write_text("hi\n")
    state = work / ".arreio"
    git = shutil.which("git") or "git"
    old = ShadowRepo(state, work, git=git, max_file_bytes=1 << 20, durable=False)
    with old.lock():
        old.ensure()
        old.run_git("update-index", "--add", "-z", "--stdin", stdin=b".env\0a.txt\0")  # as an older arreio did
        (old.tree_dir / "secret-files-1").unlink()
    repo = ShadowRepo(state, work, git=git, max_file_bytes=1 << 20, durable=False)
    point = Recorder(repo, CheckpointIndex(state, durable=False), FixedClock(), run_id="run-1").checkpoint(
        "before", step=0
    )
    assert point is not None
    files = repo.run_git("ls-tree", "-r", "--name-only", point.tree).decode().split()
    assert files == ["a.txt"]


@pytest.mark.parametrize(
    "name,text,secret",
    [
        (".env", "", True),
        (".env.local", "", True),
        (".env.production", "", True),
        (".env.example", "", False),
        (".env.sample", "", False),
        ("id_rsa", "", True),
        ("id_ed25519", "", True),
        ("id_rsa.pub", "", False),
        ("store.p12", "", True),
        (".netrc", "", True),
        (".pgpass", "", True),
        (".git-credentials", "", True),
        ("credentials.json", "", True),
        ("client_secret_123.apps.json", "", True),
        ("my-service-account.json", "", True),
        ("secrets.yaml", "", True),
        ("package.json", "", False),
        ("env.py", "", False),
        ("README.md", "", False),
        ("server.pem", PRIVATE_KEY, True),
        ("ca.pem", CERT, False),
        ("tls.key", PRIVATE_KEY, True),
        (".npmrc", "//registry.npmjs.org/:_authToken=npm_abc\n", True),
        (".npmrc", "save-exact=true\n", False),
        (".pypirc", "[pypi]\nusername = __token__\npassword = pypi-AgEabc\n", True),
    ],
)
def test_which_files_are_secrets_files(tmp_path: Path, name: str, text: str, secret: bool) -> None:
    path = tmp_path / name
    path.write_text(text)
    assert is_secret_file(path) is secret
