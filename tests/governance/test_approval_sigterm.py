"""SIGTERM at the approval question (CI timeouts, systemd, `docker stop`): it cancels the run the way
Ctrl-C there does — exit 130, the call never run, the session resumable. It used to be ignored while
the question waited (a blocking read that the loop's SIGTERM handler never reaches) and then lost:
answering `y` afterwards ran the call and the run reported success. A real pseudo-terminal, a real
signal to the child."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from arreio.engine.session.healing import check_pairing
from tests.governance.test_approval_trust import COMMAND, SCRIPT, events_of, session_of, terminal
from tests.terminal import signal_another_thread


@pytest.mark.slow
def test_sigterm_at_the_question_cancels_the_run_and_the_call_never_runs(work: Path, arreio_env, cli) -> None:  # noqa: F811
    (work / "s.yaml").write_text(SCRIPT)
    term = terminal(work, arreio_env, "run", "--goal", "GOAL.md", "--script", "s.yaml")
    term.expect(r"Run it\? \[y/N\] ")
    assert f"$ {COMMAND}" in term.plain
    term.proc.send_signal(signal.SIGTERM)
    try:
        assert term.wait(timeout=15) == 130, term.plain
    finally:
        if term.proc.poll() is None:  # the old way: still asking; a `y` would have run the call
            term.type("y\r")
            term.wait()
    # the question's line ends where it was asked; the run's end (its report, how to go on) follows on its own lines
    asked = term.plain.index("Run it? [y/N] \n")
    assert "\narreio: cancelled; continue with `arreio run --resume" in term.plain[asked:]
    assert "Traceback" not in term.plain
    assert not (work / "log.txt").exists()
    run = next((work / ".arreio" / "runs").iterdir())
    report = json.loads((run / "report.json").read_text())
    assert report["verdict"] == "cancelled" and report["exit_code"] == 130
    session = session_of(work, report["session_id"])
    assert check_pairing(session.messages) == [] and "not run" in session.messages[-1].tool_result_part.content
    resumed = cli("run", "--resume", report["session_id"], "--script", "s.yaml", "--json")  # the session goes on
    assert resumed.exit_code == 0, resumed.output
    assert events_of(resumed.stdout)[-1]["final_text"] == "All done."


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_a_signal_the_kernel_gives_another_thread_still_cancels_at_the_question(work: Path, arreio_env, sig) -> None:
    (work / "s.yaml").write_text(SCRIPT)
    term = terminal(work, arreio_env, "run", "--goal", "GOAL.md", "--script", "s.yaml")
    term.expect(r"Run it\? \[y/N\] ")
    signal_another_thread(term.proc.pid, sig)
    try:
        assert term.wait(timeout=15) == 130, term.plain
    finally:
        if term.proc.poll() is None:
            term.type("n\r")
            term.wait()
    assert "arreio: cancelled; continue with `arreio run --resume" in term.plain and "Traceback" not in term.plain
    assert not (work / "log.txt").exists()
