"""`arreio batch --ray ADDRESS` on a real Ray cluster on loopback: a head (no CPUs: it schedules
nothing) and one worker node, a 6-task offline suite across it, one worker process killed mid-task:
Ray retries that attempt, its row and the summary say so, and the batch completes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

from tests.batch.conftest import Project, fix_add_task

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install -e '.[ray]')")

pytestmark = [pytest.mark.ray, pytest.mark.slow, pytest.mark.timeout(300)]
MB = 1024 * 1024
# About 6 s: time enough to be seen running (the tests look every 0.05 s) and killed mid-reply. The
# retry streams it whole again, so every second more is a second the test waits (it was 12 s).
SLOW_FIX = [
    {
        "text": "slowly,",
        "chunk_chars": 1,
        "delay_s": 0.85,
        "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}],
    },
    {
        "tool_calls": [
            {"name": "edit_file", "arguments": {"path": "calc.py", "old": "return a - b", "new": "return a + b"}}
        ]
    },
    {"text": "Fixed `calc.py`."},
]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    from ray.cluster_utils import Cluster

    home = tmp_path_factory.mktemp("ray-home")
    old_home = os.environ.get("HOME")
    os.environ["HOME"] = str(home)  # Ray keeps a token under ~/.ray
    made = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False, "object_store_memory": 80 * MB}
    )
    try:
        made.add_node(num_cpus=2, object_store_memory=80 * MB)
        made.wait_for_nodes()
        yield made
    finally:
        made.shutdown()
        if old_home is not None:
            os.environ["HOME"] = old_home


SLOW_GOAL = "Make add() in calc.py add (the slow task)."


def attempt_processes() -> list[int]:
    """Ray worker processes running an attempt right now (Ray titles them `ray::<function>`)."""
    out = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True, check=True).stdout
    return [int(line.split()[0]) for line in out.splitlines() if "ray::_ray_attempt" in line]


def running(goal: str) -> int | None:
    """The attempt process whose open session file's header carries `goal` (its title), if any."""
    for pid in attempt_processes():
        try:
            targets = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
            for target in targets:
                if "/sessions/" in target and target.endswith(".jsonl"):
                    with open(target, encoding="utf-8") as handle:
                        if goal in handle.readline():
                            return pid
        except OSError:
            continue  # it ended meanwhile
    return None


def test_a_suite_across_a_cluster_survives_a_killed_worker(project: Project, cluster) -> None:
    slow = project.script("slow.yaml", SLOW_FIX)
    suite = project.suite(
        [fix_add_task("slow", script=slow, goal=SLOW_GOAL)] + [fix_add_task(f"t{i}") for i in range(5)]
    )
    env = {**project.env, "HOME": os.environ["HOME"]}
    driver = subprocess.Popen(
        project.argv(str(suite), "--ray", cluster.address, "--json"),
        cwd=project.root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    killed = None
    deadline = time.monotonic() + 150
    while killed is None and time.monotonic() < deadline and driver.poll() is None:
        # The slow task's attempt, told by the session it writes (its title is its goal), killed
        # mid-reply: waiting for the fast ones to finish first raced them under the suite's load.
        killed = running(SLOW_GOAL)
        if killed is not None:
            os.kill(killed, signal.SIGKILL)
        time.sleep(0.05)
    stdout, stderr = driver.communicate(timeout=180)
    assert killed is not None, "no attempt was seen running on the cluster"
    assert driver.returncode == 0, stderr
    lines = [json.loads(line) for line in stdout.splitlines()]
    rows = [line for line in lines if line["type"] == "attempt"]
    summary = lines[-1]
    assert sorted(r["task"] for r in rows) == sorted(["slow"] + [f"t{i}" for i in range(5)])
    assert all(r["passed"] for r in rows) and summary["passed"] == 6
    retried = [r for r in rows if r["tries"] > 1]
    assert [r["task"] for r in retried] == ["slow"] and retried[0]["tries"] == 2  # it ran again, and says so
    assert summary["retried"] == 1
    assert all(r["worker"].startswith("ray:") for r in rows)
    # sessions and reports came back to the driver's batch folder
    (batch,) = project.batches()
    for row in rows:
        assert (batch / row["session"]).is_file() and (batch / row["report"]).is_file()
        assert not (batch / "attempts" / row["task"] / "1" / "checkpoints").exists()
