"""`arreio mcp serve` with the `mcp` package's real client over stdio: arreio started as a real process,
each call one run through the pipeline with the folder's sandbox and policy."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SCRIPT = (
    '- tool_calls: [{name: shell, arguments: {command: "echo hello > out.txt"}}]\n'
    '- text: "I was not allowed to run it."\n'
    '- text: "Second answer."\n'
)


async def _session(work: Path, env: dict, *args: str, calls) -> list:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "arreio.cli.launch", "mcp", "serve", *args], cwd=str(work), env=env
    )
    # The server's stderr goes to a file named here: stdio_client's default is the sys.stderr of when
    # the SDK was first imported, which pytest may have swapped for a capture with no descriptor.
    with open(work.parent / "serve-stderr.txt", "w", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            return await calls(client)


def serve(work: Path, env: dict, calls, *args: str) -> list:
    return asyncio.run(asyncio.wait_for(_session(work, env, *args, calls=calls), timeout=100))


def test_run_and_continue_through_the_pipeline_with_approvals_refused(tmp_path: Path, arreio_env: dict) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "p.yaml").write_text(SCRIPT)

    async def calls(client):
        listed = await client.list_tools()
        first = await client.call_tool("run", {"goal": "write hello to out.txt"})
        sid = first.structured_content["session_id"]
        second = await client.call_tool("continue", {"session_id": sid, "instruction": "then say something"})
        return [listed, first, second]

    listed, first, second = serve(work, arreio_env, calls, "--script", "p.yaml")
    tools = {t.name: t for t in listed.tools}
    assert set(tools) == {"run", "continue"}
    assert set(tools["run"].input_schema["properties"]) == {"goal", "cwd", "model", "max_steps"}
    assert tools["run"].input_schema["required"] == ["goal"]
    assert set(tools["continue"].input_schema["required"]) == {"session_id", "instruction"}
    answer = first.structured_content
    assert not first.is_error and answer["verdict"] == "success" and answer["exit_code"] == 0
    assert answer["final_answer"] == "I was not allowed to run it."
    assert answer["refused_approvals"] == ["$ echo hello > out.txt (shell is a sensitive tool)"]
    assert "refused by policy" in answer["message"]
    assert json.loads(first.content[0].text) == answer  # the same answer as text, for any client
    assert not (work / "out.txt").exists()  # the refused command never ran
    # the one pipeline: the session, the run's report and the audit journal, as `arreio run` leaves them
    sid = answer["session_id"]
    assert (work / ".arreio" / "sessions" / f"{sid}.jsonl").is_file()
    report = json.loads((work / answer["report_path"]).read_text())
    assert report["verdict"] == "success" and report["session_id"] == sid
    journal = [
        json.loads(line)["payload"]
        for line in (work / ".arreio" / "audit.jsonl").read_text().splitlines()
        if '"kind":"approval"' in line
    ]
    assert journal[0]["status"] == "denied" and journal[0]["by"].startswith("policy: no person answers")
    later = second.structured_content
    assert later["session_id"] == sid and later["verdict"] == "success" and later["final_answer"] == "Second answer."


def test_a_real_model_run_in_another_folder_and_bad_calls(tmp_path: Path, arreio_env: dict) -> None:
    work, other = tmp_path / "work", tmp_path / "work" / "sub"
    other.mkdir(parents=True)
    (other / "notes.md").write_text("# Notes\n\nShip on Friday.\n")

    async def calls(client):
        ran = await client.call_tool(
            "run", {"goal": "Read `notes.md` and write `summary.md`.", "cwd": "sub", "model": "offline", "max_steps": 8}
        )
        missing = await client.call_tool("run", {"goal": "x", "cwd": str(tmp_path / "nowhere")})
        unknown = await client.call_tool("continue", {"session_id": "no-such", "instruction": "go on"})
        empty = await client.call_tool("run", {"goal": "   "})
        return [ran, missing, unknown, empty]

    ran, missing, unknown, empty = serve(work, arreio_env, calls)
    assert ran.structured_content["verdict"] == "success" and (other / "summary.md").is_file()
    assert (other / ".arreio" / "sessions").is_dir() and not (work / ".arreio").exists()  # the run's own folder
    for bad, said in ((missing, "no such folder"), (unknown, "no session 'no-such'"), (empty, "the goal is empty")):
        assert bad.is_error and said in bad.content[0].text and "Traceback" not in bad.content[0].text


def test_serve_with_a_missing_script_is_one_line_and_exit_2(tmp_path: Path, arreio_env: dict) -> None:
    from tests.conftest import run_cli

    out = run_cli(tmp_path, arreio_env, "mcp", "serve", "--script", "nope.yaml")
    assert out.returncode == 2 and "no such file" in out.stderr and "Traceback" not in out.stderr
