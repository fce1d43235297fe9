"""The model's server killed mid-reply and started again: the call is retried, the text the cut
attempt had streamed is withdrawn, and what the stream shows after the withdrawal adds up to the
answer that is kept."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

from tests.conftest import ARREIO
from tests.realmodel import prepare
from tests.realmodel.conftest import Project, env_for, start_own

pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(2400)]


def test_retry_after_the_server_is_killed_and_restarted(project: Project) -> None:
    port = prepare.free_port()
    server = start_own(port)
    env = env_for(project.home, server)
    project.config("retry: {max_attempts: 10, base_delay_s: 1, max_delay_s: 4}\n")
    argv = [
        *ARREIO,
        "run",
        "--json",
        "--yes",
        "--model",
        server.model,
        "--tools",
        "read_file",
        "--max-steps",
        "3",
        "Write the numbers from one to twenty in words, one per line. Do not use any tool.",
    ]
    run = subprocess.Popen(argv, cwd=project.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    events, restarted = [], None
    try:
        for line in run.stdout:
            event = json.loads(line)
            events.append(event)
            deltas = [e for e in events if e["type"] == "text_delta"]
            if restarted is None and len(deltas) >= 5:
                os.killpg(server.proc.pid, signal.SIGKILL)  # mid-stream, as a crash would
                server.proc.wait()
                time.sleep(1)
                restarted = start_own(port)
        run.wait(timeout=900)
    finally:
        if run.poll() is None:
            run.kill()
        for proc in (server.proc, restarted.proc if restarted else None):
            if proc is not None:
                prepare.stop_server(proc)
    story = "\n".join(json.dumps(e)[:300] for e in events if e["type"] != "text_delta") + run.stderr.read()[-2000:]
    assert restarted is not None, f"the reply never streamed five pieces:\n{story}"
    retries = [i for i, e in enumerate(events) if e["type"] == "retry"]
    assert retries, story
    assert events[retries[0]]["withdraws_text"] is True, story
    done = events[-1]
    assert done["type"] == "done" and done["verdict"] == "success" and run.returncode == 0, story
    # after the last withdrawal, the deltas are exactly the kept answer
    last = max(i for i in retries if events[i]["withdraws_text"])
    shown = "".join(e["text"] for e in events[last:] if e["type"] == "text_delta")
    assert shown == done["final_text"], story
    assert done["final_text"].strip(), story  # how far the model counts is its own business
