"""Command-line arguments that are not UTF-8 (Python hands their bytes over as lone surrogates).

Free text — a goal, a memory entry, a query, a reason, a config value — must be UTF-8: such an
argument is bad input, said in one line naming it, exit 2, and nothing is written. A file name may be
any bytes on Linux: `kb add` of one skips it with a note, never a traceback. Real processes, real
argv bytes: CliRunner would hand over str, never the bytes a shell passes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_cli

BAD = b"\xff"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "a.txt").write_text("hi\n")
    return folder


def arreio(work: Path, env: dict[str, str], *args: str | bytes) -> subprocess.CompletedProcess:
    return run_cli(work, env, *args, text=False, timeout=60)


def one_line_refusal(result: subprocess.CompletedProcess, what: str) -> None:
    stderr = result.stderr.decode("utf-8", "backslashreplace")
    assert result.returncode == 2, stderr
    assert stderr.splitlines() == [stderr.strip()], stderr  # one line
    assert stderr.startswith(f"arreio: error: {what} is not UTF-8 text (the byte \\xff at character "), stderr


@pytest.mark.parametrize(
    ("args", "what"),
    [
        (["run", b"read a.txt " + BAD, "--offline"], "the goal"),
        (["run", "--offline", "--mcp-prompt", "srv/p", "--arg", b"topic=" + BAD], "an --arg value"),
        (["memory", "add", b"bad " + BAD + b" bytes"], "the entry"),
        (["memory", "add", "--target", "user", b"bad " + BAD], "the entry"),
        (["memory", "remove", BAD], "OLD_TEXT"),
        (["kb", "search", b"hello " + BAD], "the query"),
        (["config", "set", "model", b"offline" + BAD], "the value"),
        (["config", "set", b"mod" + BAD + b"el", "offline"], "the key"),
        (["approve", "some-session", "--reason", b"because " + BAD], "the --reason"),
    ],
    ids=[
        "run-goal",
        "run-arg",
        "memory-add",
        "memory-add-user",
        "memory-remove",
        "kb-search",
        "config-value",
        "config-key",
        "approve-reason",
    ],
)
def test_free_text_that_is_not_utf8_is_refused_in_one_line_and_nothing_is_written(
    args, what, work: Path, arreio_env
) -> None:
    result = arreio(work, arreio_env, *args)
    one_line_refusal(result, what)
    state = work / ".arreio"
    assert not state.exists() or not any(p.is_file() and p.name != ".gitignore" for p in state.rglob("*")), sorted(
        state.rglob("*")
    )


def test_memory_replace_with_bytes_that_are_not_utf8_keeps_the_entry(work: Path, arreio_env) -> None:
    assert arreio(work, arreio_env, "memory", "add", "the build uses make").returncode == 0
    before = (work / ".arreio" / "MEMORY.md").read_bytes()
    result = arreio(work, arreio_env, "memory", "replace", "build", b"the build uses " + BAD)
    one_line_refusal(result, "the new entry")
    assert (work / ".arreio" / "MEMORY.md").read_bytes() == before


def test_kb_add_skips_a_file_whose_name_is_not_utf8_with_a_note(work: Path, arreio_env) -> None:
    docs = work / "docs"
    docs.mkdir()
    odd = docs.as_posix().encode() + b"/n" + BAD + b"me.md"
    with open(odd, "wb") as handle:
        handle.write(b"the odd file\n")
    (docs / "plain.md").write_text("the plain file talks about deployment\n")

    alone = arreio(work, arreio_env, "kb", "add", odd)
    stderr = alone.stderr.decode("utf-8", "backslashreplace")
    assert alone.returncode == 2 and "Traceback" not in stderr and "internal error" not in stderr, stderr
    assert "n\\xffme.md: skipped, its name is not UTF-8" in stderr

    both = arreio(work, arreio_env, "kb", "add", "--json", "docs")
    assert both.returncode == 0, both.stderr
    report = json.loads(both.stdout)
    assert report["added"] == 1
    assert [n for n in report["notices"] if "n\\xffme.md: skipped, its name is not UTF-8" in n]
    found = arreio(work, arreio_env, "kb", "search", "--json", "deployment")
    assert found.returncode == 0 and "plain.md" in found.stdout.decode(), found.stderr
