"""User hooks as users meet them: real config files, real hook processes started by the real CLI, the
event as JSON on stdin, exit codes, a timeout — a formatter after every write_file, a guard that
forbids `rm -rf`, context for the model, the journal, and what keeps a hook out of the agent's reach."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from arreio.engine.session.file import Session
from tests.conftest import run_cli

pytestmark = pytest.mark.slow

GUARD = """\
import json, sys
event = json.load(sys.stdin)
if "rm -rf" in event["tool_input"].get("command", ""):
    print("rm -rf is forbidden in this project", file=sys.stderr)
    sys.exit(2)
"""
FORMAT = """\
import json, sys, pathlib
event = json.load(sys.stdin)
path = pathlib.Path(sys.argv[1])
path.write_text(path.read_text().upper())
print(json.dumps({"additionalContext": "formatted " + path.name}))
"""
DUMP = """\
import json, os, sys
out = sys.argv[1]
with open(out, "a") as f:
    f.write(json.dumps({"stdin": json.load(sys.stdin), "env": dict(os.environ)}) + "\\n")
"""


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    (folder / ".arreio" / "hooks").mkdir(parents=True)
    return folder


def hook(work: Path, name: str, text: str) -> str:
    (work / ".arreio" / "hooks" / name).write_text(text)
    return f".arreio/hooks/{name}"


def config(work: Path, text: str) -> None:
    (work / ".arreio" / "config.yaml").write_text(text)


def script(work: Path, replies: list[dict]) -> None:
    (work / "s.yaml").write_text(json.dumps(replies))


def run(work: Path, env: dict, *args: str):
    return run_cli(work, env, "run", "--script", "s.yaml", "--json", *args)


def events_of(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def results(work: Path, sid: str) -> list:
    session, _ = Session.open(work / ".arreio" / "sessions" / f"{sid}.jsonl", repair=False)
    session.close()
    return [p for m in session.messages for p in m.parts if p.type == "tool_result"]


def journal(work: Path, kind: str = "hook") -> list[dict]:
    lines = (work / ".arreio" / "audit.jsonl").read_text().splitlines()
    return [e["payload"] for e in map(json.loads, lines) if e["kind"] == kind]


def test_a_formatter_runs_after_every_write_and_the_model_reads_what_it_said(work, arreio_env) -> None:
    fmt = hook(work, "fmt.py", FORMAT)
    config(
        work,
        f'hooks:\n  post_tool_use:\n    - {{match: "write_file|edit_file", command: [python3, {fmt}, "{{file}}"]}}\n',
    )
    script(
        work,
        [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "hello"}}]},
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
            {"text": "Wrote a.txt."},
        ],
    )
    done = run(work, arreio_env, "Write a.txt")
    assert done.returncode == 0, done.stderr
    assert (work / "a.txt").read_text() == "HELLO"
    sid = events_of(done.stdout)[0]["session_id"]
    written, read = results(work, sid)
    assert "[the hook `python3 .arreio/hooks/fmt.py '{file}'` says] formatted a.txt" in written.content
    assert "formatted" not in read.content  # read_file does not match
    (entry,) = journal(work)
    assert (entry["moment"], entry["tool_name"], entry["outcome"], entry["source"]) == (
        "post_tool_use",
        "write_file",
        "ok",
        ".arreio/config.yaml",
    )


def test_a_guard_refuses_rm_rf_and_the_model_reads_why(work, arreio_env) -> None:
    guard = hook(work, "guard.py", GUARD)
    config(work, f"hooks:\n  pre_tool_use:\n    - {{match: shell, command: [python3, {guard}]}}\n")
    (work / "victim").mkdir()
    script(
        work,
        [
            {"tool_calls": [{"name": "shell", "arguments": {"command": "rm -rf victim; touch ran"}}]},
            {"tool_calls": [{"name": "shell", "arguments": {"command": "echo fine > ok.txt"}}]},
            {"text": "Done."},
        ],
    )
    done = run(work, arreio_env, "Clean up", "--yes")
    assert done.returncode == 0, done.stderr
    assert (work / "victim").is_dir() and not (work / "ran").exists()
    assert (work / "ok.txt").read_text() == "fine\n"  # a command without rm -rf runs
    sid = events_of(done.stdout)[0]["session_id"]
    refused = results(work, sid)[0]
    assert refused.is_error and "rm -rf is forbidden in this project" in refused.content
    assert [e["outcome"] for e in journal(work)] == ["blocked", "ok"]
    tail = run_cli(work, arreio_env, "audit", "tail").stdout
    assert "pre_tool_use (shell) `python3 .arreio/hooks/guard.py` → blocked (exit 2) · .arreio/config.yaml" in tail


def test_a_json_decision_blocks_and_the_hook_gets_the_event_on_stdin(work, arreio_env, tmp_path) -> None:
    seen = tmp_path / "seen.jsonl"
    dump = hook(work, "dump.py", DUMP)
    deny = hook(work, "deny.py", 'print(\'{"decision": "block", "reason": "not today"}\')\n')
    config(
        work,
        f"hooks:\n  pre_tool_use:\n    - {{command: [python3, {dump}, '{seen}']}}\n"
        f"    - {{match: write_file, command: [python3, {deny}]}}\n",
    )
    script(
        work,
        [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "x.txt", "content": "x"}}]},
            {"text": "Could not."},
        ],
    )
    env = {**arreio_env, "ANTHROPIC_API_KEY": "sk-ant-api03-" + "a" * 40, "DEPLOY_TOKEN": "t0ps3cret-value-here"}
    done = run(work, env, "Write x.txt")
    assert not (work / "x.txt").exists()
    event = json.loads(seen.read_text().splitlines()[0])
    stdin = event["stdin"]
    assert stdin["hook_event_name"] == "pre_tool_use" and stdin["tool_name"] == "write_file"
    assert stdin["tool_input"] == {"path": "x.txt", "content": "x"} and stdin["cwd"] == str(work.resolve())
    assert stdin["session_id"] == events_of(done.stdout)[0]["session_id"] and stdin["call_id"]
    hook_env = event["env"]  # arreio's credentials never reach a hook
    assert "ANTHROPIC_API_KEY" not in hook_env and "DEPLOY_TOKEN" not in hook_env
    assert hook_env["PYTHONSAFEPATH"] == "1" and hook_env["ARREIO_HOOK_EVENT"] == "pre_tool_use"
    assert "not today" in results(work, stdin["session_id"])[0].content


def test_a_guard_that_times_out_refuses_the_call_and_one_that_crashes_only_warns(work, arreio_env) -> None:
    slow = hook(work, "slow.py", "import time\ntime.sleep(60)\n")
    crash = hook(work, "crash.py", "raise SystemExit(1)\n")
    config(
        work,
        f"hooks:\n  pre_tool_use:\n    - {{match: shell, command: [python3, {slow}], timeout_s: 1}}\n"
        f"    - {{match: write_file, command: [python3, {crash}]}}\n",
    )
    script(
        work,
        [
            {"tool_calls": [{"name": "shell", "arguments": {"command": "touch ran"}}]},
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "w.txt", "content": "w"}}]},
            {"text": "Done."},
        ],
    )
    done = run(work, arreio_env, "Work", "--yes")
    assert not (work / "ran").exists() and (work / "w.txt").read_text() == "w"
    events = events_of(done.stdout)
    ends = [e for e in events if e["type"] == "tool_end"]
    assert ends[0]["is_error"] and "did not answer (timed out)" in ends[0]["preview"]
    warnings = [e["message"] for e in events if e["type"] == "warning"]
    assert any("pre_tool_use hook `python3 .arreio/hooks/crash.py`" in w and "exited 1" in w for w in warnings)
    assert [e["outcome"] for e in journal(work)] == ["timeout", "error"]


def test_prompt_submit_adds_context_or_refuses_and_session_start_enters_the_prompt(work, arreio_env) -> None:
    config(
        work,
        "hooks:\n  user_prompt_submit:\n    - {command: [echo, the build command is make]}\n"
        "  session_start:\n    - {command: [echo, branch main is checked out]}\n",
    )
    script(work, [{"text": "Noted."}])
    done = run(work, arreio_env, "Build it")
    assert done.returncode == 0, done.stderr
    sid = events_of(done.stdout)[0]["session_id"]
    session, _ = Session.open(work / ".arreio" / "sessions" / f"{sid}.jsonl", repair=False)
    session.close()
    texts = [m.text for m in session.messages if m.role == "user"]
    context = "[context from the hook `echo 'the build command is make'`]\nthe build command is make"
    assert texts == ["Build it", context]
    block = next(b for b in session.header.system if b.name == "hook_context")
    assert block.text == "branch main is checked out" and not block.stable

    refuse = hook(work, "refuse.py", "import sys\nprint('no deploys on Friday', file=sys.stderr)\nsys.exit(2)\n")
    config(work, f"hooks:\n  user_prompt_submit:\n    - {{command: [python3, {refuse}]}}\n")
    refused = run(work, arreio_env, "Deploy")
    assert refused.returncode == 1
    last = events_of(refused.stdout)[-1]
    assert last["verdict"] == "failed" and "no deploys on Friday" in last["message"] and last["steps"] == 0


def test_user_and_project_hooks_both_run_user_first(work, arreio_env, tmp_path) -> None:
    log = tmp_path / "order.log"
    user_config = Path(arreio_env["XDG_CONFIG_HOME"]) / "arreio" / "config.yaml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text(f"hooks:\n  stop:\n    - {{command: [sh, -c, 'echo user >> {log}']}}\n")
    config(work, f"hooks:\n  stop:\n    - {{command: [sh, -c, 'echo project >> {log}']}}\n")
    script(work, [{"text": "Hi."}])
    assert run(work, arreio_env, "Hi").returncode == 0
    assert log.read_text().split() == ["user", "project"]


@pytest.mark.parametrize(
    "command, why",
    [
        ("[./fmt.sh]", "in a folder the agent can write"),
        ("[fmt-planted]", "is not on a PATH entry the agent cannot write"),
        ("[python3, tools/fmt.py]", "'tools/fmt.py' is a script in a folder the agent can write"),
    ],
)
def test_a_hook_never_runs_a_program_the_agent_could_have_written(work, arreio_env, command, why) -> None:
    (work / "bin").mkdir()
    (work / "tools").mkdir()
    for planted in (work / "fmt.sh", work / "bin" / "fmt-planted", work / "tools" / "fmt.py"):
        planted.write_text("#!/bin/sh\ntouch PWNED\n")
        planted.chmod(planted.stat().st_mode | stat.S_IXUSR)
    config(work, f"hooks:\n  post_tool_use:\n    - {{command: {command}}}\n")
    script(
        work,
        [{"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "a"}}]}, {"text": "Done."}],
    )
    env = {**arreio_env, "PATH": f"{work / 'bin'}{os.pathsep}{arreio_env['PATH']}"}
    done = run(work, env, "Write")
    assert done.returncode == 5 and why in done.stderr and "Traceback" not in done.stderr
    assert not (work / "PWNED").exists() and not (work / "a.txt").exists()


def test_the_agent_cannot_write_the_hook_config(work, arreio_env) -> None:
    config(work, "hooks: {}\n")
    evil = "hooks:\n  session_start:\n    - {command: [sh, -c, 'touch PWNED']}\n"
    script(
        work,
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": ".arreio/config.yaml", "content": evil}},
                    {"name": "shell", "arguments": {"command": f"printf '{evil}' > .arreio/config.yaml"}},
                ]
            },
            {"text": "Done."},
        ],
    )
    run(work, arreio_env, "Add a hook", "--yes")
    assert (work / ".arreio" / "config.yaml").read_text() == "hooks: {}\n"
    script(work, [{"text": "Hi."}])
    assert run(work, arreio_env, "Hi").returncode == 0 and not (work / "PWNED").exists()


def test_a_bad_hook_config_is_one_line_and_exit_5(work, arreio_env) -> None:
    config(work, "hooks:\n  pre_tool_use:\n    - {match: '(', command: [true]}\n")
    script(work, [{"text": "Hi."}])
    done = run(work, arreio_env, "Hi")
    assert done.returncode == 5 and "hooks.pre_tool_use" in done.stderr and "not a regular expression" in done.stderr
    config(work, "hooks:\n  stop:\n    - {command: [true], sandbox: true}\n")
    done = run(work, arreio_env, "Hi")
    assert done.returncode == 5 and "sandbox: true is for the hooks of tool calls and prompts, not stop" in done.stderr
    config(work, "hooks:\n  pre_tol_use: []\n")
    done = run(work, arreio_env, "Hi")
    assert done.returncode == 5 and "did you mean 'hooks.pre_tool_use'" in done.stderr


def test_doctor_shows_each_hook_and_what_it_runs(work, arreio_env) -> None:
    guard = hook(work, "guard.py", GUARD)
    config(work, f"hooks:\n  pre_tool_use:\n    - {{match: shell, command: [python3, {guard}]}}\n")
    done = run_cli(work, arreio_env, "doctor", "--no-mcp", "--json")
    (line,) = [c for c in json.loads(done.stdout)["checks"] if c["name"].startswith("hook")]
    assert line["status"] == "ok" and line["name"] == "hook pre_tool_use"
    assert line["detail"].startswith(f"`python3 {guard}` for shell (.arreio/config.yaml) runs /")
    config(work, "hooks:\n  stop:\n    - {command: [./notify.sh]}\n")
    (work / "notify.sh").write_text("#!/bin/sh\n")
    (work / "notify.sh").chmod(0o755)
    done = run_cli(work, arreio_env, "doctor", "--no-mcp", "--json")
    (line,) = [c for c in json.loads(done.stdout)["checks"] if c["name"].startswith("hook")]
    assert done.returncode == 1 and line["status"] == "problem" and "in a folder the agent can write" in line["detail"]


@pytest.mark.skipif(not Path("/usr/bin/bwrap").exists(), reason="needs bubblewrap")
def test_a_sandboxed_hook_writes_only_where_the_agent_may(work, arreio_env, tmp_path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    config(
        work,
        "hooks:\n  post_tool_use:\n    - {match: write_file, sandbox: true, command: "
        f"[sh, -c, 'echo in > boxed.txt; echo out > {outside}/escaped.txt']}}\n",
    )
    script(
        work,
        [{"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "a"}}]}, {"text": "Done."}],
    )
    done = run(work, arreio_env, "Write")
    assert done.returncode == 0, done.stderr
    assert (work / "boxed.txt").read_text() == "in\n" and not (outside / "escaped.txt").exists()
    # sh exits 2 when a redirection fails: for post_tool_use that is "tell the model", with its stderr
    sid = events_of(done.stdout)[0]["session_id"]
    assert "escaped.txt" in results(work, sid)[0].content.split("says]")[1]  # sh: cannot create …


def test_the_file_name_the_agent_chose_is_never_read_as_code(work, arreio_env, tmp_path) -> None:
    log = tmp_path / "names.log"
    config(work, "hooks:\n  post_tool_use:\n    - {match: write_file, command: [sh, -c, 'black {file}']}\n")
    script(work, [{"text": "Hi."}])
    refused = run(work, arreio_env, "Hi")
    assert refused.returncode == 5 and "{file} must be a word of its own" in refused.stderr
    config(
        work,
        "hooks:\n  post_tool_use:\n    - {match: write_file, command: "
        f"[sh, -c, 'printf \"%s\\\\n\" \"$1\" >> {log}', sh, '{{file}}']}}\n",
    )
    hostile = "a$(touch PWNED);touch PWNED2;.txt"
    script(
        work,
        [{"tool_calls": [{"name": "write_file", "arguments": {"path": hostile, "content": "x"}}]}, {"text": "Done."}],
    )
    done = run(work, arreio_env, "Write")
    assert done.returncode == 0, done.stderr
    assert log.read_text() == f"{(work / hostile).resolve()}\n"
    assert not (work / "PWNED").exists() and not (work / "PWNED2").exists()
