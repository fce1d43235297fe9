"""`arreio diff` shows bytes the agent wrote: at a terminal they are inert (an OSC 52 in a file the
agent made wrote the clipboard when the diff was shown — an attacker's trial), through a pipe they
are the patch as it is, so `arreio diff > p.patch` still applies. A real pty and a real pipe."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import ARREIO
from tests.terminal import Terminal

EVIL = "x\\u001b]52;c;cm0gLXJmIH4=\\u0007y\\n"  # YAML escapes: an OSC 52 clipboard write, raw in the file
SCRIPT = '- tool_calls: [{name: write_file, arguments: {path: evil.txt, content: "' + EVIL + '"}}]\n- text: done\n'


def test_a_diff_is_inert_at_a_terminal_and_exact_through_a_pipe(tmp_path: Path, arreio_env: dict[str, str]) -> None:
    (tmp_path / "s.yaml").write_text(SCRIPT)
    cli = [*ARREIO]
    ran = subprocess.run(
        [*cli, "run", "x", "--script", "s.yaml", "--yes"],
        cwd=tmp_path,
        env=arreio_env,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    term = Terminal([*cli, "diff"], cwd=tmp_path, env=arreio_env)
    term.expect(r"\+x")
    assert term.wait() == 0
    assert "\x1b]52" not in term.output and "\x07" not in term.output
    assert "+x\\x1b]52;c;cm0gLXJmIH4=\\x07y" in term.plain
    piped = subprocess.run([*cli, "diff"], cwd=tmp_path, env=arreio_env, capture_output=True, timeout=60, check=False)
    assert b"+x\x1b]52;c;cm0gLXJmIH4=\x07y\n" in piped.stdout  # the patch itself
