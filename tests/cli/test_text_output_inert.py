"""`--output text` shows the final answer inert, as the live view does (docs/security.md: "Terminal escapes
are shown, not obeyed"): an OSC 0 title, an OSC 52 clipboard write or a clear screen in model text
reaches stdout as readable characters, never as the bytes a terminal obeys. Honest text (accents,
CJK, emoji, tabs, newlines) is unchanged, and `--json` keeps the text as data. The process, its pipe
and its terminal are real: a subprocess, a pseudo-terminal."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import pytest

from arreio.cli.render import TextRenderer
from arreio.engine.core import events as ev
from tests.conftest import ARREIO, run_cli
from tests.terminal import Terminal

EVIL = "before\x1b]0;TITLE-PWNED\x07\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x1b[Hafter-clear \u202egnp.exe \x9b2J"
EVIL_SHOWN = (
    "before\\x1b]0;TITLE-PWNED\\x07\\x1b]52;c;cm0gLXJmIH4=\\x07\\x1b[2J\\x1b[Hafter-clear \\u202egnp.exe \\x9b2J"
)
HONEST = "Café crème, naïve façade — ½ done\n\tindented\tcolumns\n中文 テスト 한국어 🎉 ✓\n\nlast line"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    for name, text in (("evil.yaml", EVIL), ("honest.yaml", HONEST)):
        (folder / name).write_text(json.dumps([{"text": text}]))  # JSON is YAML: every character exact
    return folder


@pytest.fixture
def env(arreio_env: dict) -> dict:
    return {k: v for k, v in arreio_env.items() if k not in ("COLUMNS", "LINES")}


def arreio(work: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return run_cli(work, env, *args, text=False, timeout=60)


def test_a_pipe_gets_the_answer_inert(work: Path, env: dict) -> None:
    out = arreio(work, env, "run", "Say it", "--script", "evil.yaml", "--output", "text")
    assert out.returncode == 0, out.stderr
    assert b"\x1b" not in out.stdout and b"\x07" not in out.stdout and b"\xc2\x9b" not in out.stdout
    assert out.stdout.decode() == EVIL_SHOWN + "\n"


def test_honest_text_comes_through_unchanged(work: Path, env: dict) -> None:
    out = arreio(work, env, "run", "Say it", "--script", "honest.yaml", "--output", "text")
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode() == HONEST + "\n"


def test_json_keeps_the_text_as_data(work: Path, env: dict) -> None:
    out = arreio(work, env, "run", "Say it", "--script", "evil.yaml", "--json")
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in out.stdout.decode().splitlines()]  # every line is JSON
    assert events[-1]["type"] == "done" and events[-1]["final_text"] == EVIL  # exact, not escaped twice
    assert b"\x1b" not in out.stdout  # the encoder writes \u001b


def at_a_terminal(work: Path, env: dict, script: str) -> str:
    """What the terminal receives when stdout alone is a pty (stderr to a file, so no progress shows)."""
    argv = [*ARREIO, "run", "Say it", "--script", script, "--output", "text"]
    term = Terminal(["sh", "-c", 'exec "$@" 2>err.txt', "sh", *argv], cwd=work, env=env)
    assert term.wait() == 0, term.output + (work / "err.txt").read_text()
    return term.output.replace("\r\n", "\n")  # the line discipline's newline


@pytest.mark.slow
def test_a_terminal_gets_no_escape_from_the_model(work: Path, env: dict) -> None:
    shown = at_a_terminal(work, env, "evil.yaml")
    assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown
    assert shown == EVIL_SHOWN + "\n"
    assert at_a_terminal(work, env, "honest.yaml") == HONEST + "\n"


def _printed(done: ev.Done) -> str:
    out = io.StringIO()
    TextRenderer(out)(done)
    return out.getvalue()


def test_a_schema_answer_stays_valid_json() -> None:
    value = {"note": "naïve 中文 🎉", "evil": EVIL}
    text = json.dumps(value, ensure_ascii=False, indent=2)  # as the run's final_text holds it
    printed = _printed(ev.Done(verdict="success", exit_code=0, final_text=text, final_json=value))
    assert json.loads(printed) == value  # still the same value, and JSON
    assert not any(ch in printed for ch in "\x1b\x07\x9b\u202e")
    honest = {"note": "naïve 中文 🎉\tok"}
    printed = _printed(ev.Done(verdict="success", exit_code=0, final_text="", final_json=honest))
    assert printed == json.dumps(honest, ensure_ascii=False, indent=2) + "\n"  # unicode left as it is
