"""A model server is untrusted, and so is its error text: whatever it says on the way to failing (an
SSE `error:` line as llama.cpp sends it, a 200 that is no event stream, a 4xx/5xx body, a very long
one) reaches the user's terminal only inert — escapes shown, not obeyed — and on one line, cut to a
sane length, with the exit code README's table gives. Real processes (`arreio run`, `arreio batch`,
`arreio chat` on a pipe) against the local server; `--json` keeps the text as data."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from provider_fakes import Reply

from tests.conftest import run_cli

EVIL = "boom\x1b]0;pwned\x07 \x1b[2J \x9b31m \u202egnp.exe\rfake line\nsecond line\tTAB"
RAW = (b"\x1b", b"\x07", b"\xc2\x9b", "\u202e".encode(), b"\r")  # what a terminal would act on
SHOWN = "boom\\x1b]0;pwned\\x07 \\x1b[2J \\x9b31m \\u202egnp.exe\\x0dfake line second line TAB"
CONFIG = "retry:\n  base_delay_s: 0.01\n  max_delay_s: 0.05\n  max_attempts: 2\n"
START = (
    b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"x","choices":[{"index":0,'
    b'"delta":{"role":"assistant","content":null},"finish_reason":null}]}\n\n'
)


def error_line(message: str) -> Reply:
    """llama.cpp's server: a 200 stream, then `error: {...}` and `data: [DONE]`."""
    said = json.dumps({"code": 500, "message": message, "type": "server_error"}).encode()
    return Reply(body=START + b"error: " + said + b"\n\ndata: [DONE]\n\n")


CASES = {  # replies (enough for every attempt), exit code, what the one stderr line says
    "sse_error_line": ([error_line(EVIL)] * 2, 1, "still failed after 2 attempts"),
    "not_a_stream": (
        [Reply(body=f"<html>{EVIL}</html>".encode(), content_type="text/html")],
        1,
        "instead of an event stream",
    ),
    "http_400": ([Reply.error(400, {"error": {"message": EVIL, "type": "invalid_request_error"}})], 1, "HTTP 400"),
    "http_503": ([Reply.error(503, {"error": {"message": EVIL, "type": "server_error"}})] * 2, 1, "HTTP 503"),
    "http_401": (
        [Reply.error(401, {"error": {"message": EVIL, "type": "authentication_error"}})],
        5,
        "refused the credentials",
    ),
    "long_plain_500": ([Reply(status=500, body=EVIL.encode() * 2000, content_type="text/plain")] * 2, 1, "HTTP 500"),
}


@pytest.fixture
def project(tmp_path: Path, server) -> tuple[Path, dict[str, str]]:
    (tmp_path / ".arreio").mkdir()
    (tmp_path / ".arreio" / "config.yaml").write_text(CONFIG)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "ARREIO_"))}
    env.update(HOME=str(tmp_path / "home"), OPENAI_API_KEY="test", OPENAI_BASE_URL=f"{server.url}/v1")
    return tmp_path, env


def arreio(project: tuple[Path, dict[str, str]], *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """`arreio ARGS` as a real process, its output as bytes (`stdin`: what is piped in, else closed)."""
    work, env = project
    return run_cli(
        work, env, *args, text=False, timeout=300, input=stdin
    )  # litellm's import alone took a minute under load


def assert_inert(*outputs: bytes) -> None:
    for out in outputs:
        found = [raw for raw in RAW if raw in out]
        assert not found, f"{found} reached the terminal: {out[-600:]!r}"


def one_line_each(out: bytes) -> None:
    """The server's text never begins a line of its own: the lines it is on start as arreio's do."""
    for line in out.decode().splitlines():
        if "second line" in line or "fake line" in line:
            assert "boom" in line, f"the server's text made a line of its own: {line!r}"


def error_of(stderr: bytes) -> str:
    lines = stderr.decode().splitlines()
    said = [line for line in lines if line.startswith("arreio: error: ")]
    assert len(said) == 1, lines
    return said[0]


@pytest.mark.parametrize("case", list(CASES))
def test_a_run_shows_the_servers_error_inert_on_one_line(project, server, case):
    replies, code, says = CASES[case]
    server.push(*replies)
    done = arreio(project, "run", "--model", "openai/x", "Say hi")
    assert done.returncode == code, done.stderr
    assert_inert(done.stdout, done.stderr)
    one_line_each(done.stdout)
    one_line_each(done.stderr)
    line = error_of(done.stderr)
    assert says in line and "\\x1b]0;pwned\\x07" in line  # still readable: the escapes are shown
    assert len(line) < 1500  # a 100 kB body is cut (500 characters, each escape shown in at most 6)
    if case == "not_a_stream":  # the start of the body, its whitespace (the CR too) made spaces
        assert SHOWN.replace("\\x0d", " ") in line
    elif case != "long_plain_500":
        assert SHOWN in line
    if len(replies) > 1:  # retried: the live view said so, once per retry, on one line
        retries = [x for x in done.stdout.decode().splitlines() if x.startswith("↻ retry")]
        assert len(retries) == 1 and "\\x1b[2J" in retries[0] and "second line" in retries[0]


@pytest.mark.parametrize("case", ["sse_error_line", "http_401"])
def test_output_text_keeps_stdout_empty_and_stderr_one_inert_line(project, server, case):
    replies, code, says = CASES[case]
    server.push(*replies)
    done = arreio(project, "run", "--model", "openai/x", "--output", "text", "Say hi")
    assert done.returncode == code and done.stdout == b""
    assert_inert(done.stderr)
    assert done.stderr.decode().splitlines() == [error_of(done.stderr)]
    assert SHOWN in error_of(done.stderr) and says in error_of(done.stderr)


def test_json_is_data_and_the_one_stderr_line_still_inert(project, server):
    server.push(*CASES["sse_error_line"][0])
    done = arreio(project, "run", "--model", "openai/x", "--json", "Say hi")
    assert done.returncode == 1
    events = [json.loads(line) for line in done.stdout.decode().splitlines()]  # every line is JSON
    assert EVIL in events[-1]["message"] and [e["reason"] for e in events if e["type"] == "retry"] == [
        f"openai: stream error server_error: {EVIL}"
    ]  # exact: the encoder escapes, nothing else
    assert b"\x1b" not in done.stdout and b"\x07" not in done.stdout and b"\r" not in done.stdout
    assert_inert(done.stderr)
    assert SHOWN in error_of(done.stderr)


def test_a_batch_on_a_pipe_shows_the_failure_inert(project, server):
    work, _ = project
    (work / "t1").mkdir()
    (work / "suite.yaml").write_text(
        "version: 1\ntasks:\n  - id: t1\n    goal: Say hi\n    workdir: t1\n    model: openai/x\n"
    )
    server.push(*CASES["http_400"][0])
    done = arreio(project, "batch", "suite.yaml")
    # was: the row and the summary's failure line carried the server's ESC, BEL, CSI, bidi and CR as
    # they came, and its newline split the summary's line in two
    assert done.returncode == 1, done.stderr
    assert_inert(done.stdout, done.stderr)
    one_line_each(done.stdout)
    rows = [line for line in done.stdout.decode().splitlines() if "boom" in line]
    assert len(rows) == 2 and all("HTTP 400" in row and "\\x1b]0;pwned\\x07" in row for row in rows)
    assert rows[0].startswith("✗ t1 #1  failed") and rows[1].strip().startswith("#1 failed: ")


def test_a_piped_chat_shows_the_retry_and_the_failure_inert(project, server):
    server.push(*CASES["http_503"][0])
    done = arreio(project, "chat", "--model", "openai/x", stdin=b"hi\n")
    assert done.returncode == 1, done.stderr
    assert_inert(done.stdout, done.stderr)
    one_line_each(done.stdout)
    one_line_each(done.stderr)
    assert SHOWN in error_of(done.stderr)
    assert next(line for line in done.stdout.decode().splitlines() if "boom" in line).startswith("↻ retry 1")


def test_through_litellm_a_200_that_is_no_reply_fails_the_run_instead_of_an_empty_success(project, server):
    """litellm reads an error page sent with 200 as a finished, empty reply: `arreio run` exited 0 with
    no answer. The run fails (exit 1) at once, naming what came on one inert line (the OpenAI route's
    tap keeps the page's start)."""
    work, env = project
    server.push(*[Reply(body=f"<html>{EVIL}</html>".encode(), content_type="text/html")] * 2)
    done = arreio(
        (work, {**env, "ARREIO_BASE_URL": f"{server.url}/v1"}), "run", "--model", "litellm/openai/x", "Say hi"
    )
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert_inert(done.stdout, done.stderr)
    said = error_of(done.stderr)
    assert "text/html instead of an event stream" in said and SHOWN[:40] in said, said
    assert len(server.seen) == 1  # a page where the API was meant to be is not asked again
