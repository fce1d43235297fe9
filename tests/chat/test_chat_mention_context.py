"""A file attached with `@path` is context for the message, not instructions: the offline model read
`self.items` and `self.items.append` out of an attached file as paths to open."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli

CALC = (
    "class Calc:\n    def __init__(self):\n        self.items = []\n\n    def push(self, x):\n"
    "        self.items.append(x)\n        return self.items\n"
)


def test_an_attached_files_names_are_not_goal_text(work: Path, arreio_env: dict) -> None:
    (work / "src").mkdir()
    (work / "src" / "calc.py").write_text(CALC)
    done = run_cli(work, arreio_env, "chat", "--offline", input="look at @src/calc.py\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "read_file(path='src/calc.py')" in done.stdout
    assert "self.items" not in done.stdout and "file not found" not in done.stdout
