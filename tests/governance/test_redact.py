"""No secret from the environment appears in any file the run wrote, nor in the events it printed."""

from __future__ import annotations

import json
from pathlib import Path

from arreio.engine.core import events as ev
from arreio.engine.walls.delta_guard import DeltaGuard
from arreio.engine.walls.redact import Redactor
from arreio.engine.walls.secret_env import looks_secret

SECRET = "sk-test-Zq8vN3xL0pR7tY2wK9mB4cD6"  # also a provider-key format, but found here as the env value
PLAIN_SECRET = "hunter2-correct-horse-battery"  # no known format: only the env name marks it


def test_env_values_that_look_like_keys_are_picked(tmp_path: Path) -> None:
    env = {
        "MY_API_KEY": SECRET,
        "DB_PASSWORD": PLAIN_SECRET,
        "SSH_AUTH_SOCK": "/tmp/agent.1",
        "DEBUG_TOKEN": "1",
        "PATH": "/usr/bin",
        "HOME": "/home/me",
        "KEYBOARD_LAYOUT": "us-international",
    }
    assert sorted(n for n, v in env.items() if looks_secret(n, v)) == ["DB_PASSWORD", "MY_API_KEY"]
    r = Redactor.from_env(env)
    assert r.text(f"key={SECRET} pw {PLAIN_SECRET}") == "key=[REDACTED:MY_API_KEY] pw [REDACTED:DB_PASSWORD]"


def test_common_token_formats_are_redacted_wherever_they_come_from() -> None:
    r = Redactor()
    samples = [
        "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345",
        "ghp_" + "a" * 36,
        "github_pat_" + "B" * 40,
        "AKIAABCDEFGHIJKLMNOP",
        "xoxb-123456789012-abcdefghij",
        "AIza" + "c" * 35,
        "hf_" + "d" * 34,
        "glpat-" + "e" * 20,
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----",
    ]
    for sample in samples:
        out = r.text(f"before {sample} after")
        assert sample not in out and "[REDACTED]" in out and out.startswith("before ") and out.endswith(" after"), (
            sample
        )
    assert r.text("Authorization: Bearer abcdefghijklmnopqrstuvwxyz123") == "Authorization: Bearer [REDACTED]"
    assert r.text("export OPENAI_API_KEY=abc123def456ghi") == "export OPENAI_API_KEY=[REDACTED]"
    # ordinary words that merely resemble formats stay
    assert (
        r.text("the task-runner tokenizer uses sk-learn and ask-me")
        == "the task-runner tokenizer uses sk-learn and ask-me"
    )


def test_a_secret_split_across_streamed_deltas_is_redacted_whole() -> None:
    guard = DeltaGuard(Redactor({"MY_API_KEY": SECRET}))
    pieces = ["The key is ", SECRET[:7], SECRET[7:20], SECRET[20:] + " and", " that is all"]
    out = [e for p in pieces for e in guard.feed(ev.TextDelta(text=p))]
    out += guard.feed(ev.UnitEnd(unit_id="main", verdict="success"))
    text = "".join(e.text for e in out if e.type == "text_delta")
    assert text == "The key is [REDACTED:MY_API_KEY] and that is all"
    assert all(SECRET[:7] not in e.text for e in out if e.type == "text_delta")
    assert out[-1].type == "unit_end"


def test_no_secret_reaches_any_file_or_event(work: Path, cli, monkeypatch) -> None:
    monkeypatch.setenv("MY_API_KEY", SECRET)
    monkeypatch.setenv("DB_PASSWORD", PLAIN_SECRET)
    # passed to shell on purpose (by default it never gets them): what it prints must still be redacted
    (work / ".arreio").mkdir(exist_ok=True)
    (work / ".arreio" / "config.yaml").write_text("sandbox:\n  env_passthrough: [MY_API_KEY, DB_PASSWORD]\n")
    (work / "s.yaml").write_text(
        '- text: "I will check the key ' + SECRET + ' now."\n'
        "  chunk_chars: 5\n"
        "  tool_calls:\n"
        "    - {name: shell, arguments: {command: 'echo $MY_API_KEY; echo $DB_PASSWORD'}}\n"
        "    - {name: write_file, arguments: {path: notes.txt, content: 'the key is " + SECRET + "'}}\n"
        '- text: "Done; the key was ' + SECRET + " and the password " + PLAIN_SECRET + '."\n'
        "  chunk_chars: 3\n"
    )
    result = cli("run", "--goal", "GOAL.md", "--script", "s.yaml", "--json", "--yes")
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines()]
    shell_end = next(e for e in events if e["type"] == "tool_end" and e["name"] == "shell")
    assert shell_end["preview"] == "[REDACTED:MY_API_KEY]"  # the tool ran with the real value...
    for secret in (SECRET, PLAIN_SECRET, SECRET[:12], SECRET[-12:]):
        assert secret not in result.stdout
        leaks = [p for p in (work / ".arreio").rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
        assert leaks == [], f"{secret[:6]}… leaked into {leaks}"  # ...and nothing the run wrote holds it
    assert "[REDACTED:MY_API_KEY]" in events[-1]["final_text"]
    assert SECRET in (work / "notes.txt").read_text()  # the user's own files are the model's to write
