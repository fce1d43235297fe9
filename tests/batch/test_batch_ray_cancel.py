"""Ctrl-C to `arreio batch --ray` leaves nothing running, on a cluster and on the local runtime.

Before: the driver cancelled its Ray tasks with `force=True`, which kills the worker process at once;
the attempt never ran its clean-up, so what its `setup` started (a process group of its own) kept
running after the batch said "cancelled", with the attempt's folder and its copy of the workdir in
the node's temporary folder. Now each running attempt is interrupted where it runs and cleans up
itself; on the local runtime, whatever a killed attempt left is swept once the runtime is down."""

from __future__ import annotations

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
from tests.batch.test_batch_ray import cluster  # noqa: F401  (a fixture)
from tests.conftest import INTERRUPTIBLE

pytest.importorskip("ray", reason="the ray extra is not installed (pip install -e '.[ray]')")

pytestmark = [pytest.mark.ray, pytest.mark.slow, pytest.mark.timeout(300)]
TMP = Path(tempfile.gettempdir())  # the nodes' temporary folder (loopback: this machine's)


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


def test_ctrl_c_on_a_cluster_stops_each_attempt_where_it_runs(project: Project, cluster) -> None:  # noqa: F811
    """No sweep on a cluster (its nodes are not this machine's to sweep): the attempt cleaned up itself."""
    cancel_mid_setup(project, "raycancel", "sleep 72.25", cluster.address)


def test_ctrl_c_on_a_cluster_started_with_ctrl_c_ignored_still_stops_each_attempt(project: Project) -> None:
    """A node whose starter ignored Ctrl-C (`ray start` from a script's background job) has workers
    that ignore it, and Ray stops a task with a simulated Ctrl-C: the attempt must still clean up."""
    from ray.cluster_utils import Cluster

    from tests.batch.test_batch_ray import MB

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
