"""`--output-last-message FILE` after a cancelled run: the file is emptied, as it is after a pause or a
failure, so it never holds an earlier run's answer (docs/running.md). A cancel (Ctrl-C or SIGTERM) used to
leave it as it was. Real processes, real signals."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.conftest import run_cli, signalled_mid_answer


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_cancelled_run_empties_the_last_message_file(tmp_path: Path, arreio_env, sig: signal.Signals) -> None:
    (tmp_path / "last.txt").write_text("OLD answer of an earlier run\n")
    code, _, err = signalled_mid_answer(tmp_path, arreio_env, sig, "--output-last-message", "last.txt")
    assert code == 130, err
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
