"""`--offline` named when a scripted session goes on is the offline model: the script the session was
started with does not play over it (it ran out and failed the run)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli


def _scripted_session(work: Path, env: dict) -> str:
    (work / "s.json").write_text(json.dumps([{"text": "Hello one."}]))
    done = run_cli(work, env, "run", "Say hi", "--script", "s.json", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])["session_id"]


def test_resume_with_offline_plays_the_offline_model_not_the_sessions_script(tmp_path: Path, arreio_env: dict) -> None:
    session = _scripted_session(tmp_path, arreio_env)
    done = run_cli(tmp_path, arreio_env, "run", "--resume", session, "List the files here.", "--offline", "--json")
    assert done.returncode == 0, done.stderr
    assert "ran out" not in done.stderr
    started = json.loads(done.stdout.splitlines()[0])
    assert started["model"] == "offline"
    # the script still plays when no model is named (its one reply is used up: it says so)
    again = run_cli(tmp_path, arreio_env, "run", "--resume", session, "Say hi again", "--json")
    assert again.returncode == 1 and "the offline script ran out" in again.stderr


def test_resume_in_an_offline_chat_goes_on_with_the_offline_model(tmp_path: Path, arreio_env: dict) -> None:
    session = _scripted_session(tmp_path, arreio_env)
    chat = run_cli(
        tmp_path,
        arreio_env,
        "chat",
        "--offline",
        input=f"/resume {session}\nList the files here.\nAnd again, list them.\n",
    )
    assert chat.returncode == 0, chat.stdout + chat.stderr
    assert "ran out" not in chat.stdout + chat.stderr
