"""A state folder arreio may not write: `memory add`, `curator status`, `config set`,
`undo --yes` and others ended in `internal error: PermissionError … (set ARREIO_DEBUG=1 …)`, exit 1.
A file-system refusal is one line naming the path, with the exit code for bad input (as `run` says
for the same folder). Real files: an immutable folder (`chattr +i`, which binds root too)."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from arreio.cli.errors import report_os_error
from tests.conftest import cli_env, run_cli


def test_each_refusal_is_one_line_with_its_code(capsys: pytest.CaptureFixture[str]) -> None:
    cases = [
        (errno.EACCES, 2, "permission denied"),
        (errno.EPERM, 2, "not permitted"),
        (errno.EROFS, 2, "the file system is read-only"),
        (errno.ENOSPC, 1, "no space left on the device"),
        (errno.EFBIG, 1, "over the file-size limit (ulimit -f)"),
    ]
    for number, code, said in cases:
        assert report_os_error(OSError(number, os.strerror(number), "/p/.arreio/MEMORY.md")) == code
        line = capsys.readouterr().err
        assert line.startswith(f"arreio: error: cannot write /p/.arreio/MEMORY.md: {said}") and line.count("\n") == 1
    assert report_os_error(OSError(errno.EBADF, "Bad file descriptor")) is None  # not the disk's refusal: a bug
    assert capsys.readouterr().err == ""


@pytest.mark.skipif(shutil.which("prlimit") is None, reason="prlimit (util-linux) is not installed")
def test_a_file_size_limit_met_mid_run_is_one_line_and_exit_1(tmp_path: Path) -> None:
    """`ulimit -f` (a CI job's, a shared host's) stops the session's first lines: it was `internal
    error: OSError: [Errno 27] File too large`."""
    (tmp_path / ".arreio").mkdir()
    env = {**cli_env(tmp_path / "home"), "ARREIO_MODEL": "offline"}
    done = run_cli(tmp_path, env, "run", "Say hello.", timeout=60, under=["prlimit", "--fsize=1000", "--"])
    assert done.returncode == 1, done.stderr
    line = done.stderr.strip()
    assert "\n" not in line and line.startswith("arreio: error: ") and "internal error" not in line
    assert line.endswith("over the file-size limit (ulimit -f)")


def _arreio(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(cwd, cli_env(cwd.parent / "home"), *args, timeout=60)


@pytest.fixture
def frozen(tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    assert _arreio(work, "memory", "add", "a first fact").returncode == 0
    chattr = shutil.which("chattr")
    if (
        chattr is None
        or subprocess.run([chattr, "-R", "+i", str(work / ".arreio")], check=False, capture_output=True).returncode != 0
    ):
        pytest.skip("chattr +i is not available on this file system")
    yield work
    subprocess.run([chattr, "-R", "-i", str(work / ".arreio")], check=True)


@pytest.mark.parametrize(
    "args", [["memory", "add", "a second fact"], ["config", "set", "max_steps", "5"], ["curator", "run"]]
)
def test_a_state_folder_that_cannot_be_written_is_one_line_and_exit_2(frozen: Path, args: list[str]) -> None:
    done = _arreio(frozen, *args)
    assert done.returncode == 2, done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    line = done.stderr.strip()
    assert "\n" not in line and line.startswith("arreio: error: cannot write ") and str(frozen / ".arreio") in line
