"""`arreio batch --ray` on a real Ray cluster on loopback: a head (no CPUs: it schedules nothing) and
one worker node, started once for this module (each start costs seconds of both cores).

- A killed worker: a 6-task offline suite, one worker process killed mid-task: Ray retries that
  attempt, its row and the summary say so, and the batch completes.
- What a killed worker left: a Ray worker killed mid-attempt cleans nothing up (its folder on the
  node, the copy of the workdir, what the setup left running); the next attempt on that node does,
  from the ledger the dead one left (workcopy.py).
- Ctrl-C leaves nothing running, on a cluster and on the local runtime. Before, the driver cancelled
  its Ray tasks with `force=True`, which kills the worker process at once: the attempt never ran its
  clean-up, so what its `setup` started (a process group of its own) kept running after the batch
  said "cancelled", with the attempt's folder and its copy of the workdir in the node's temporary
  folder. Now each running attempt is interrupted where it runs and cleans up itself; on the local
  runtime, whatever a killed attempt left is swept once the runtime is down."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tests.batch.conftest import Project, fix_add_task
from tests.batch.test_batch_cancel import running
from tests.batch.test_batch_lifecycle import wait_for
from tests.conftest import INTERRUPTIBLE, lacks, signal_handlers_kept

pytestmark = [
    pytest.mark.skipif(lacks("ray"), reason="the ray extra is not installed (pip install -e '.[ray]')"),
    pytest.mark.ray,
    pytest.mark.slow,
    pytest.mark.timeout(300),
]
MB = 1024 * 1024
TMP = Path(tempfile.gettempdir())  # the nodes' temporary folder (loopback: this machine's)
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
    # Ray's head sets a SIGTERM handler in this process: the worker's later tests get theirs back
    with signal_handlers_kept():
        made = Cluster(
            initialize_head=True,
            head_node_args={"num_cpus": 0, "include_dashboard": False, "object_store_memory": 80 * MB},
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


def attempt_with_goal(goal: str) -> int | None:
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


def start_driver(project: Project, suite: Path, address: str, *extra: str) -> subprocess.Popen:
    """`arreio batch SUITE --ray ADDRESS --json EXTRA` running, its output piped (Ray's token is under
    the HOME the cluster was started with)."""
    return subprocess.Popen(
        project.argv(str(suite), "--ray", address, "--json", *extra),
        cwd=project.root,
        env={**project.env, "HOME": os.environ["HOME"]},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )


def test_a_suite_across_a_cluster_survives_a_killed_worker(project: Project, cluster) -> None:
    slow = project.script("slow.yaml", SLOW_FIX)
    suite = project.suite(
        [fix_add_task("slow", script=slow, goal=SLOW_GOAL)] + [fix_add_task(f"t{i}") for i in range(5)]
    )
    driver = start_driver(project, suite, cluster.address)
    killed = None
    deadline = time.monotonic() + 150
    while killed is None and time.monotonic() < deadline and driver.poll() is None:
        # The slow task's attempt, told by the session it writes (its title is its goal), killed
        # mid-reply: waiting for the fast ones to finish first raced them under the suite's load.
        killed = attempt_with_goal(SLOW_GOAL)
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


def ledger_of(pid: int, task: str) -> tuple[Path, dict] | None:
    """The ledger of the attempt `pid` runs for `task` (its copy is `arreio-<task>-…`), once its setup
    has left something running. Only this test's task: another test's attempt on another cluster of
    this machine (a Ctrl-C test's, from another worker of the suite) must not be the one killed here."""
    for ledger in Path(tempfile.gettempdir()).glob("arreio-ray-*/out/leftovers.json"):
        try:
            data = json.loads(ledger.read_text())
        except (OSError, ValueError):
            continue
        mine = Path(str(data.get("copy", ""))).name.startswith(f"arreio-{task}-")
        if mine and data.get("owner") == pid and data.get("groups"):
            return ledger, data
    return None


def test_what_a_killed_ray_worker_left_is_removed_by_the_next_attempt_there(project: Project, cluster) -> None:
    slow = project.script("slow.yaml", SLOW_FIX)
    suite = project.suite([fix_add_task("slowleft", script=slow, setup="sleep 71.25 & true"), fix_add_task("after")])
    driver = start_driver(project, suite, cluster.address, "-j", "1")
    killed = None
    deadline = time.monotonic() + 150
    while killed is None and time.monotonic() < deadline and driver.poll() is None:
        for pid in attempt_processes():
            if (found := ledger_of(pid, "slowleft")) is not None:
                killed, (ledger, data) = pid, found
                os.kill(pid, signal.SIGKILL)
                break
        time.sleep(0.05)
    _, stderr = driver.communicate(timeout=180)
    assert killed is not None, "no attempt was seen running its setup's leftovers on the cluster"
    assert driver.returncode == 0, stderr
    assert [r["passed"] for r in project.rows()] == [True, True]
    # the retry on that node removed the dead try's folder and copy, and killed what its setup started
    assert not ledger.parent.parent.exists() and not Path(data["copy"]).exists()
    out = subprocess.run(["ps", "-eo", "args="], capture_output=True, text=True, check=True).stdout
    assert "sleep 71.25" not in out


def ours(task: str) -> list[str]:
    """Folders an attempt of `task` made in the nodes' temporary folder: its copy of the workdir, and
    (on Ray) the attempt's folder with the ledger that names that copy."""
    copies = [p.name for p in TMP.glob(f"arreio-{task}-*")]
    attempts = [p.name for p in TMP.glob("arreio-ray-*") if any(task in line for line in _ledger(p))]
    return copies + attempts


def _ledger(folder: Path) -> list[str]:
    try:
        return (folder / "out" / "leftovers.json").read_text().splitlines()
    except OSError:
        return []


def cancel_mid_setup(project: Project, task: str, marker: str, *ray: str) -> None:
    suite = project.suite([fix_add_task(task, setup=f"{marker} & {marker}")])
    env = {**project.env, "HOME": os.environ.get("HOME", project.env["HOME"])}  # Ray's token lives there
    driver = subprocess.Popen(
        project.argv(str(suite), "--ray", *ray),
        cwd=project.root,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        **INTERRUPTIBLE,
    )
    try:
        try:
            wait_for(lambda: len(running(marker)) >= 2 or driver.poll() is not None, 120, "the setup to run")
        finally:
            if driver.poll() is not None or len(running(marker)) < 2:
                driver.kill()
                raise AssertionError(f"the setup never ran on a Ray worker: {driver.communicate()}")
        assert ours(task), "the attempt's folders were not where the test looks"
        driver.send_signal(signal.SIGINT)
        _, stderr = driver.communicate(timeout=60)
    finally:
        if driver.poll() is None:
            driver.kill()
    assert driver.returncode == 130, stderr
    deadline = time.monotonic() + 5
    while (running(marker) or ours(task)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert running(marker) == [] and ours(task) == []


def test_ctrl_c_on_a_cluster_stops_each_attempt_where_it_runs(project: Project, cluster) -> None:
    """No sweep on a cluster (its nodes are not this machine's to sweep): the attempt cleaned up itself."""
    cancel_mid_setup(project, "raycancel", "sleep 72.25", cluster.address)


def test_ctrl_c_on_a_cluster_started_with_ctrl_c_ignored_still_stops_each_attempt(project: Project) -> None:
    """A node whose starter ignored Ctrl-C (`ray start` from a script's background job) has workers
    that ignore it, and Ray stops a task with a simulated Ctrl-C: the attempt must still clean up."""
    from ray.cluster_utils import Cluster

    before = signal.signal(signal.SIGINT, signal.SIG_IGN)  # inherited by every process of the cluster
    try:
        made = Cluster(
            initialize_head=True,
            head_node_args={"num_cpus": 0, "include_dashboard": False, "object_store_memory": 80 * MB},
        )
        made.add_node(num_cpus=2, object_store_memory=80 * MB)
    finally:
        signal.signal(signal.SIGINT, before)
    try:
        made.wait_for_nodes()
        cancel_mid_setup(project, "raydeaf", "sleep 72.75", made.address)
    finally:
        made.shutdown()


def test_ctrl_c_on_the_local_runtime_leaves_nothing_running(project: Project) -> None:
    cancel_mid_setup(project, "localcancel", "sleep 72.75")
