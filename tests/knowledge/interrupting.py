"""Interrupting a real `arreio kb add` with the real embedder: what the Ctrl-C test and
`tests/bench/bench_kb_interrupt.py` share (the documents, the process, the signal, the index read)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import ARREIO, INTERRUPTIBLE

# Prose of many sentences: every chunk carries a passage and several sentence embeddings.
PARAGRAPH = (
    "The harness keeps every session in one JSON Lines file. Each line is flushed before the next "
    "turn starts. A torn last line is repaired on load, with a warning. Compaction rewrites the file "
    "through a temporary copy. The knowledge base indexes documents in two phases. Keyword search "
    "works as soon as a file is stored. Vectors arrive in batches afterwards.\n\n"
)


def make_project(root: Path, files: int = 3) -> dict[str, str]:
    """`root/docs` with `files` guides of prose; returns the environment for `kb add` there (its
    own state folder, the e5 embedder)."""
    docs = root / "docs"
    docs.mkdir()
    for n in range(files):
        (docs / f"guide-{n}.md").write_text(f"# Guide {n}\n\n" + PARAGRAPH * 25, encoding="utf-8")
    return {**os.environ, "ARREIO_HOME": str(root / "state"), "ARREIO_KB_EMBEDDER": "e5"}


def vectors(root: Path) -> tuple[int, int]:
    """(chunks, chunks with a vector), read while the writer runs (WAL allows it)."""
    try:
        db = root / "state" / "knowledge.sqlite"
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return conn.execute("SELECT COUNT(*), COUNT(vec) FROM chunks").fetchone()
    except sqlite3.Error:
        return 0, 0


@dataclass
class Interrupted:
    returncode: int
    stderr: str
    stopped_s: float  # from the signal to the process's exit
    stored: tuple[int, int]  # (chunks, with a vector) before the signal
    running: bool  # still embedding when the signal went (else it finished first)


def interrupt_kb_add(root: Path, env: dict[str, str], pin: list[str], after_s: float = 0.5) -> Interrupted:
    """Start `kb add docs`, wait until embedding is under way (a vector is stored), let it run
    `after_s` more (in the middle of a model call), send SIGINT and time the exit."""
    proc = subprocess.Popen(
        [*pin, *ARREIO, "kb", "add", "docs", "--json"],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **INTERRUPTIBLE,
    )
    deadline = time.monotonic() + 240
    while vectors(root)[1] == 0 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    stored = vectors(root)
    time.sleep(after_s)
    running = proc.poll() is None
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    return Interrupted(proc.returncode, err, time.monotonic() - sent, stored, running)


def resume_kb_add(root: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ARREIO, "kb", "add", "docs", "--json"],
        check=False,
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
    )
