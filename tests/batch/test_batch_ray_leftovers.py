"""A Ray worker killed mid-attempt cleans nothing up (its folder on the node, the copy of the workdir,
what the setup left running): the next attempt on that node does, from the ledger the dead one left
(workcopy.py). The same real loopback cluster as test_batch_ray.py."""

from __future__ import annotations

import json
import os
import signal
import tempfile
import time
from pathlib import Path

import pytest

from tests.batch.conftest import Project, fix_add_task
from tests.batch.test_batch_ray import SLOW_FIX, attempt_processes, cluster  # noqa: F401  (a fixture)

pytest.importorskip("ray", reason="the ray extra is not installed (pip install -e '.[ray]')")

pytestmark = [pytest.mark.ray, pytest.mark.slow, pytest.mark.timeout(300)]


def ledger_of(pid: int, task: str) -> tuple[Path, dict] | None:
    """The ledger of the attempt `pid` runs for `task` (its copy is `arreio-<task>-…`), once its setup
    has left something running. Only this test's task: another test's attempt on another cluster of
    this machine (a Ctrl-C test, in another worker) must not be the one killed here."""
    for ledger in Path(tempfile.gettempdir()).glob("arreio-ray-*/out/leftovers.json"):
        try:
            data = json.loads(ledger.read_text())
        except (OSError, ValueError):
            continue
        ours = Path(str(data.get("copy", ""))).name.startswith(f"arreio-{task}-")
        if ours and data.get("owner") == pid and data.get("groups"):
            return ledger, data
    return None


def test_what_a_killed_ray_worker_left_is_removed_by_the_next_attempt_there(project: Project, cluster) -> None:  # noqa: F811
    import subprocess

    slow = project.script("slow.yaml", SLOW_FIX)
    suite = project.suite([fix_add_task("slowleft", script=slow, setup="sleep 71.25 & true"), fix_add_task("after")])
    env = {**project.env, "HOME": os.environ["HOME"]}
    driver = subprocess.Popen(
        project.argv(str(suite), "--ray", cluster.address, "--json", "-j", "1"),
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
