"""Every file a user names to `arreio run` or `arreio batch`, and every config a run reads, may be a
FIFO, a device, a 2 GB sparse file, billion-laughs YAML or 50,000 levels deep. Each is refused in one
line — exit 2, or 5 for a config (docs/architecture.md section 9) — before a byte too many is read: a FIFO is not
waited on (the old code hung for ever), /dev/zero and the sparse file are not read into memory (a
MemoryError), the aliases are not expanded (a hang) and the nesting is not recursed into (a
RecursionError). Real `arreio` processes, each under a timeout."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.bad_files import JSON_KINDS, REASON, SPECIAL, YAML_KINDS, assert_refused, make
from tests.conftest import run_cli
from tests.warm_client import warm_command

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="FIFOs, /dev/zero")]

TIMEOUT = 60  # a refusal takes a second; the old code never ended on a FIFO


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "a.txt").write_text("hi\n")
    return folder


def _schema_name(kind: str) -> str:
    return "schema.yaml" if kind in ("laughs", "deep-yaml") else "schema.json"


NAMED = {  # option → (file name, the arguments around it)
    "--plan": ("plan.yaml", lambda f: ["run", "list the files", "--plan", f, "--offline"]),
    "--script": ("script.yaml", lambda f: ["run", "list the files", "--script", f]),
    "batch": ("suite.yaml", lambda f: ["batch", f]),
}


@pytest.mark.parametrize("kind", YAML_KINDS)
@pytest.mark.parametrize("option", list(NAMED))
def test_a_bad_yaml_file_the_user_names_is_refused_in_one_line(option: str, kind: str, work: Path, arreio_env) -> None:
    name, args = NAMED[option]
    make(work / name, kind)
    result = run_cli(work, arreio_env, *args(name), timeout=TIMEOUT)
    assert_refused(result, says=name)
    assert REASON[kind] in result.stderr


@pytest.mark.parametrize("kind", JSON_KINDS)
def test_a_bad_cassette_is_refused_in_one_line(kind: str, work: Path, arreio_env) -> None:
    make(work / "tape.jsonl", kind)
    result = run_cli(work, arreio_env, "run", "list the files", "--replay", "tape.jsonl", timeout=TIMEOUT)
    assert_refused(result, says="tape.jsonl")
    assert (REASON[kind] if kind in SPECIAL else "is not an arreio cassette") in result.stderr


@pytest.mark.parametrize("kind", YAML_KINDS)
def test_a_bad_output_schema_is_refused_in_one_line(kind: str, work: Path, arreio_env) -> None:
    name = _schema_name(kind)
    make(work / name, kind)
    result = run_cli(work, arreio_env, "run", "list the files", "--output-schema", name, "--offline", timeout=TIMEOUT)
    assert_refused(result, says=name)
    assert REASON[kind] in result.stderr


@pytest.mark.parametrize("kind", SPECIAL)
def test_a_goal_file_that_is_no_regular_file_of_a_sane_size_is_refused(kind: str, work: Path, arreio_env) -> None:
    make(work / "GOAL.md", kind)
    result = run_cli(work, arreio_env, "run", "--goal", "GOAL.md", "--offline", timeout=TIMEOUT)
    assert_refused(result, says=f"goal file GOAL.md is {REASON[kind]}")
    assert not (work / ".arreio" / "sessions").exists()


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_named_as_itself_is_refused(device: str, work: Path, arreio_env) -> None:
    for args in (
        ["run", "--goal", device, "--offline"],
        ["run", "x", "--plan", device, "--offline"],
        ["run", "x", "--script", device],
        ["run", "x", "--replay", device],
        ["batch", device],
    ):
        assert_refused(run_cli(work, arreio_env, *args, timeout=TIMEOUT), says="a character device")


@pytest.mark.parametrize(
    ("which", "kind"), [("project", kind) for kind in YAML_KINDS] + [("user", "fifo"), ("user", "laughs")]
)
def test_a_bad_config_file_is_a_config_error_in_one_line(which: str, kind: str, work: Path, arreio_env) -> None:
    home = Path(arreio_env["XDG_CONFIG_HOME"])
    make(work / ".arreio" / "config.yaml" if which == "project" else home / "arreio" / "config.yaml", kind)
    result = run_cli(work, arreio_env, "run", "list the files", "--offline", timeout=TIMEOUT)
    assert_refused(result, 5, says="config")
    assert REASON[kind] in result.stderr
    listing = run_cli(work, arreio_env, "config", "list", timeout=TIMEOUT)
    assert_refused(listing, 5, says="config")
    assert REASON[kind] in listing.stderr


@pytest.mark.parametrize("how", ["--goal -", "piped"])
@pytest.mark.parametrize("source", ["/dev/zero", "/dev/urandom"])
def test_a_goal_on_stdin_is_capped(how: str, source: str, work: Path, arreio_cmd, arreio_env) -> None:
    """Stdin as context was cut at 100 KB; stdin as the goal was read whole, until the memory ran out."""
    import subprocess

    args = ["run", "--goal", "-", "--offline"] if how == "--goal -" else ["run", "--offline"]
    with open(source, "rb") as stdin:
        result = subprocess.run(
            [*(warm_command(arreio_env) or arreio_cmd), *args],
            cwd=work,
            env=arreio_env,
            stdin=stdin,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    assert_refused(result, says="the goal on stdin is over the 1 MB limit for a goal")


def test_a_chat_fed_from_dev_zero_is_refused(work: Path, arreio_cmd, arreio_env) -> None:
    import subprocess

    with open("/dev/zero", "rb") as stdin:
        result = subprocess.run(
            [*(warm_command(arreio_env) or arreio_cmd), "chat", "--offline"],
            cwd=work,
            env=arreio_env,
            stdin=stdin,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    assert_refused(result, says="the messages on stdin are over the 4 MB limit")


@pytest.mark.parametrize("reply", ["fenced", "a call's arguments"])
def test_a_model_reply_holding_50k_deep_json_is_not_a_crash(reply: str, work: Path, arreio_env) -> None:
    """JSON a model writes (a tool call as text, its arguments) is parsed bounded too: it was a
    RecursionError, "internal error", the run lost."""
    deep = "[" * 50_000 + "]" * 50_000
    text = f"```json\n{deep}\n```" if reply == "fenced" else '{"name": "read_file", "arguments": ' + deep + "}"
    (work / "script.json").write_text(json.dumps([{"text": text}]))
    result = run_cli(work, arreio_env, "run", "x", "--script", "script.json", "--output", "text", timeout=TIMEOUT)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr[-2000:]
    assert result.returncode in (0, 1), result.stderr[-2000:]
