"""`--continue` goes on with the session last worked on here; when a newer session file is damaged
(its first line is not a header) it is passed over — and now said on stderr, naming the file and
the command that looks at it, instead of going on silently with an older session.
Real sessions made by real `arreio run` processes."""

from __future__ import annotations

import os
import time
from pathlib import Path

from arreio.engine.session.store import SessionStore
from tests.conftest import run_cli as arreio


def two_sessions(tmp_path: Path, env: dict[str, str]) -> tuple[Path, SessionStore, list[str]]:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("hello\n")
    for goal in ("read a.txt", "read a.txt again"):
        assert arreio(work, env, "run", "--offline", goal).returncode == 0
        time.sleep(0.05)  # distinct file times
    store = SessionStore(work / ".arreio" / "sessions")
    # In the order they were made: two runs within one second have ids that sort by their random part.
    ids = [p.stem for p in sorted(store.directory.glob("*.jsonl"), key=lambda p: p.stat().st_mtime_ns)]
    assert len(ids) == 2
    return work, store, ids


def test_a_damaged_newer_session_is_named(tmp_path: Path, arreio_env: dict[str, str]) -> None:
    work, store, (older, newer) = two_sessions(tmp_path, arreio_env)
    assert store.latest(work) == newer and store.passed_over(newer) is None
    (store.directory / f"{newer}.jsonl").write_bytes(b"")  # emptied
    assert store.latest(work) == older
    assert store.unreadable_since(older) == [newer]
    done = arreio(work, arreio_env, "run", "--continue", "--offline", "read a.txt once more")
    assert done.returncode == 0, done.stderr
    warning = [line for line in done.stderr.splitlines() if "passed over" in line]
    assert warning == [
        f"arreio: warning: --continue passed over {newer}: newer, but the first line is not a "
        f"session header (`arreio sessions doctor {newer}` looks at it)"
    ]


def test_an_older_damaged_session_is_not_mentioned(tmp_path: Path, arreio_env: dict[str, str]) -> None:
    work, store, (older, newer) = two_sessions(tmp_path, arreio_env)
    path = store.directory / f"{older}.jsonl"
    stamp = path.stat().st_mtime_ns
    path.write_bytes(b"garbage\n")
    os.utime(path, ns=(stamp, stamp))  # damaged, but from before the session --continue picks
    assert store.latest(work) == newer and store.passed_over(newer) is None
    done = arreio(work, arreio_env, "run", "--continue", "--offline", "read a.txt once more")
    assert done.returncode == 0 and "passed over" not in done.stderr, done.stderr
