"""`--output-last-message FILE` after a cancelled run: the file is emptied, as it is after a pause or a
failure, so it never holds an earlier run's answer (docs/running.md). A cancel (Ctrl-C or SIGTERM) used to
leave it as it was. Real processes, real signals."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import ARREIO, INTERRUPTIBLE, run_cli

SLOW = '- text: "slow slow slow slow slow slow slow slow"\n  chunk_chars: 2\n  delay_s: 0.3\n'


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_cancelled_run_empties_the_last_message_file(tmp_path: Path, arreio_env, sig: signal.Signals) -> None:
    (tmp_path / "last.txt").write_text("OLD answer of an earlier run\n")
    (tmp_path / "s.yaml").write_text(SLOW)
    proc = subprocess.Popen(
        [*ARREIO, "run", "x", "--script", "s.yaml", "--output-last-message", "last.txt"],
        cwd=tmp_path,
        env=arreio_env,
        text=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **INTERRUPTIBLE,
    )
    deadline = time.monotonic() + 30
    while not list((tmp_path / ".arreio" / "sessions").glob("*.jsonl")):  # the run has started
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    time.sleep(1.0)  # in the middle of the answer (about 7 s long)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "arreio: cancelled" in err
    assert (tmp_path / "last.txt").read_text() == ""


@pytest.mark.parametrize(
    "argv",
    [["--goal", "nope.md"], ["x", "--output", "yaml"], ["x", "--replay", "c.jsonl", "--offline"]],
    ids=["missing goal file", "bad --output", "flags that disagree"],
)
def test_bad_input_empties_the_last_message_file_too(tmp_path: Path, arreio_env, argv: list[str]) -> None:
    """Regression: bad input found before the run started (here with stdin piped, as a script runs it)
    left the file holding the last run's answer."""
    (tmp_path / "last.txt").write_text("OLD answer of an earlier run\n")
    done = run_cli(tmp_path, arreio_env, "run", *argv, "--output-last-message", "last.txt", input="some context\n")
    assert done.returncode == 2, done.stderr
    assert (tmp_path / "last.txt").read_text() == ""
