"""Ctrl-C pressed several times in a row (impatient keys come in bursts): the run stops once, cleans
up, lands its report, says "cancelled" and exits 130. asyncio's own handler raised KeyboardInterrupt
at the second one wherever the clean-up was, and a third within ~10 ms ended the process by the signal
with no report. A real process, real signals."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from arreio.engine.session.file import Session
from arreio.engine.session.healing import check_pairing
from tests.conftest import ARREIO, INTERRUPTIBLE

SLOW = '- text: "slow slow slow slow slow slow slow slow slow slow"\n  chunk_chars: 2\n  delay_s: 0.3\n'


@pytest.mark.slow
@pytest.mark.parametrize("gap_s", [0.0, 0.004, 0.05])
def test_a_burst_of_ctrl_c_stops_the_run_once(tmp_path: Path, arreio_env: dict[str, str], gap_s: float) -> None:
    (tmp_path / "s.yaml").write_text(SLOW)
    child = subprocess.Popen(
        [*ARREIO, "run", "x", "--script", "s.yaml"],
        cwd=tmp_path,
        env=arreio_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **INTERRUPTIBLE,
    )
    assert child.stdout is not None
    child.stdout.readline()  # the run's first line: it has started
    time.sleep(0.5)
    for _ in range(4):
        child.send_signal(signal.SIGINT)
        time.sleep(gap_s)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 130, err
    assert err.strip().splitlines()[-1].startswith("arreio: cancelled; continue with `arreio run --resume")
    (run,) = (tmp_path / ".arreio" / "runs").iterdir()
    report = json.loads((run / "report.json").read_text())
    assert report["verdict"] == "cancelled" and report["exit_code"] == 130
    session, repairs = Session.open(tmp_path / ".arreio" / "sessions" / f"{report['session_id']}.jsonl", repair=False)
    session.close()
    assert repairs == [] and check_pairing(session.messages) == []
