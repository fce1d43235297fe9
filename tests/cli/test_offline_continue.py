"""The offline model in a session continued with a new instruction (`arreio run --continue "…"`): the file
the new instruction asks for is titled from that instruction, not from the session's first message
(hi.txt began "# Summary: List the notes"). Real processes, a real git folder."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import run_cli


def test_a_file_asked_for_by_a_later_instruction_is_titled_from_it(tmp_path: Path, arreio_env) -> None:
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    (work / "notes.md").write_text("# Notes\n\nOne line.\n")
    first = run_cli(work, arreio_env, "run", "List the notes", "--offline")
    assert first.returncode == 0, first.stderr
    later = run_cli(work, arreio_env, "run", "--continue", "Write hello to hi.txt", "--offline")
    assert later.returncode == 0, later.stderr
    assert (work / "hi.txt").read_text().splitlines()[0] == "# Summary: Write hello to hi.txt"
