"""`arreio.api` as a program uses it: a real process importing the installed package (not the test's
path), running goals through the one pipeline, reading the events, draining to a result."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import REPO

SHELL_SCRIPT = '- tool_calls: [{name: shell, arguments: {command: "echo hello > out.txt"}}]\n- text: "finished"\n'


def program(tmp_path: Path, arreio_env: dict, source: str) -> dict:
    """Run `source` as a user's program in its own folder; it prints one JSON object last."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "user_program.py").write_text(textwrap.dedent(source))
    env = {k: v for k, v in arreio_env.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [sys.executable, "user_program.py"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=110,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_events_stream_and_the_result_drain(tmp_path: Path, arreio_env: dict) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "notes.md").write_text("# Notes\n\nThe launch is on Friday.\n")
    found = program(
        tmp_path,
        arreio_env,
        """
        import asyncio, json
        import arreio.api
        from arreio.api import Done, Result, TextDelta, run, run_sync, run_to_result

        async def main():
            kinds, text, done = [], [], None
            async for event in run("Read `notes.md` and write a summary to `summary.md`.", model="offline"):
                kinds.append(event.type)
                if isinstance(event, TextDelta):
                    text.append(event.text)
                if isinstance(event, Done):
                    done = event
            result = await run_to_result("Read `notes.md` and write `copy.md`.", model="offline", max_steps=10)
            return kinds, "".join(text), done, result

        kinds, text, done, result = asyncio.run(main())
        again = run_sync(resume=result.session_id, goal="Read `notes.md` again.", model="offline")
        print(json.dumps({"module": arreio.api.__file__, "kinds": kinds, "text": text,
                          "done": done.model_dump(mode="json"), "result": result.__dict__,
                          "again": [again.session_id, again.verdict], "ok": result.ok}))
    """,
    )
    assert Path(found["module"]).resolve().is_relative_to(REPO)  # the installed (editable) package
    assert found["kinds"][0] == "run_start" and found["kinds"][-1] == "done" and "tool_start" in found["kinds"]
    assert found["done"]["verdict"] == "success" and found["text"].strip().endswith(found["done"]["final_text"].strip())
    assert (tmp_path / "work" / "summary.md").is_file() and (tmp_path / "work" / "copy.md").is_file()
    result = found["result"]
    assert result["verdict"] == "success" and found["ok"] and result["refused"] == [] and result["session_id"]
    assert found["again"] == [result["session_id"], "success"]  # resumed the same session


def test_approvals_refused_paused_or_answered(tmp_path: Path, arreio_env: dict) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "p.yaml").write_text(SHELL_SCRIPT)
    found = program(
        tmp_path,
        arreio_env,
        """
        import json, os
        from arreio.api import run_sync

        refused = run_sync("write hello to out.txt", script="p.yaml")
        wrote_refused = os.path.exists("out.txt")
        paused = run_sync("write hello to out.txt", script="p.yaml", approve="pause")
        asked = []
        answered = run_sync("write hello to out.txt", script="p.yaml",
                            approve=lambda event: asked.append(event.summary) or True)
        print(json.dumps({"refused": [refused.verdict, refused.refused, refused.final_text, wrote_refused],
                          "paused": [paused.verdict, paused.exit_code],
                          "answered": [answered.verdict, asked, open("out.txt").read()]}))
    """,
    )
    verdict, refused, final, wrote = found["refused"]
    assert verdict == "success" and refused == ["$ echo hello > out.txt (shell is a sensitive tool)"] and not wrote
    assert final == "finished"
    assert found["paused"] == ["paused", 3]
    assert found["answered"] == ["success", ["$ echo hello > out.txt"], "hello\n"]
    journal = [json.loads(line) for line in (tmp_path / "work" / ".arreio" / "audit.jsonl").read_text().splitlines()]
    refusals = [e["payload"] for e in journal if e["kind"] == "approval" and e["payload"]["status"] == "denied"]
    assert refusals and refusals[0]["by"] == "policy: no person answers approvals for a program that embeds arreio"


def test_bad_input_raises_before_anything_is_written(tmp_path: Path, arreio_env: dict) -> None:
    found = program(
        tmp_path,
        arreio_env,
        """
        import json, os
        from arreio.api import UsageError, run_sync

        said = []
        for kwargs in ({"goal": None}, {"goal": "  "}, {"goal": "x", "cwd": "/no/such/folder"},
                       {"goal": "x", "resume": "no-such-session"}, {"goal": "x", "approve": "maybe"}):
            try:
                run_sync(model="offline", **kwargs)
            except UsageError as error:
                said.append(error.message)
        print(json.dumps({"said": said, "state": os.path.exists(".arreio/sessions")}))
    """,
    )
    assert len(found["said"]) == 5 and "nothing to run" in found["said"][0] and "no such folder" in found["said"][2]
    assert found["state"] is False
