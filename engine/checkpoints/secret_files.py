"""Files that hold secrets by their nature, which checkpoints never copy: `.env` (not `.env.example`),
private keys (`id_rsa`, `*.p12`, a `.pem` or `.key` holding a private key), `.netrc`, `.pgpass`,
`.git-credentials`, cloud credentials (`credentials.json`, `client_secret*.json`, service-account
keys), `secrets.yaml`, `.htpasswd`, and a `.npmrc` or `.pypirc` holding a token or password.

Why left out rather than kept: the shadow store keeps a run's checkpoints for `keep_days` and the
newest run of a folder for ever, so a copy would outlive the secret's rotation or the file's removal;
and a copy with the secret redacted would make `arreio undo` write `[REDACTED]` into the user's
file. Left out, such a file is named at once and in the report ("not checkpointed, so `arreio undo`
cannot restore them"), as a file `.gitignore` keeps out is — where most of them already were.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arreio.engine.checkpoints.store import ShadowRepo

__all__ = ["SECRET_FILE_WHY", "forget_kept_copies", "is_secret_file", "pathspecs"]

SECRET_FILE_WHY = "a secrets file: never copied into checkpoints"

_ALWAYS = re.compile(
    r"""\.env(?:\.(?!(?:example|sample|template|dist|defaults?|schema)$)[\w.-]+)?|\.envrc
      | id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)? | .+\.(?:p12|pfx|jks|keystore|kdbx|ppk|asc\.key)
      | \.netrc|_netrc|\.pgpass|\.git-credentials|\.htpasswd|\.my\.cnf
      | credentials(?:\.json)?|client_secrets?[\w.-]*\.json|[\w.-]*service[-_]?account[\w.-]*\.json
      | secrets?\.(?:ya?ml|json|toml|env)""",
    re.IGNORECASE | re.VERBOSE,
)
# Names that hold a secret only sometimes: read (the first 64 KB) to know.
_SOMETIMES = re.compile(r".+\.(?:pem|key)|\.npmrc|\.pypirc", re.IGNORECASE)
_INSIDE = re.compile(rb"PRIVATE KEY-----|_auth(?:Token)?\s*=|^\s*password\s*[:=]", re.MULTILINE | re.IGNORECASE)
# The same names as git pathspecs, to find copies an older arreio kept (`ShadowRepo`).
_GLOBS = (
    ".env",
    ".env.*",
    ".envrc",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "*.ppk",
    ".netrc",
    ".pgpass",
    ".git-credentials",
    ".htpasswd",
    "credentials",
    "credentials.json",
    "client_secret*.json",
    "*service*account*.json",
    "secret.*",
    "secrets.*",
    "*.pem",
    "*.key",
    ".npmrc",
    ".pypirc",
)


def is_secret_file(path: Path) -> bool:
    """Whether the file at `path` is one checkpoints leave out (by its name; for a `.pem`, `.key`,
    `.npmrc` or `.pypirc`, by what it holds)."""
    name = path.name
    if _ALWAYS.fullmatch(name):
        return True
    if not _SOMETIMES.fullmatch(name):
        return False
    try:
        with open(path, "rb") as handle:
            return _INSIDE.search(handle.read(65536)) is not None
    except OSError:
        return False


def pathspecs() -> list[str]:
    """Git pathspecs (glob magic, any case, any folder) for every name `is_secret_file` may take."""
    return [f":(glob,icase)**/{glob}" for glob in _GLOBS]


def forget_kept_copies(repo: ShadowRepo) -> None:
    """Once per tree (call under the store's lock): a secrets file an older arreio put in the tree's
    stat cache leaves it, so no later snapshot carries its copy on (the runs that hold one lose it
    when they are pruned)."""
    done = repo.tree_dir / "secret-files-1"
    if done.exists():
        return
    if repo.index_file.exists():
        listed = repo.run_git("ls-files", "-z", "--", *pathspecs(), env={"GIT_LITERAL_PATHSPECS": ""})
        kept = [raw for raw in listed.split(b"\0") if raw and is_secret_file(repo.worktree / os.fsdecode(raw))]
        if kept:
            repo.run_git("update-index", "--force-remove", "-z", "--stdin", stdin=b"\0".join(kept) + b"\0")
    done.write_text("secrets files are left out of this tree's checkpoints\n")
