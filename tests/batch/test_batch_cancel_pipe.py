"""Ctrl-C to `arreio batch … 2>&1 | cat`: the terminal's Ctrl-C takes `cat` too, the
batch's last line ("cancelled; finish it with …") met a closed pipe, and the closed-pipe rule (a
reader that left early is not a failure: exit 0) turned the cancel into success. It exits 130."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from tests.batch.conftest import Project, fix_add_task
from tests.batch.test_batch_cancel import running
from tests.batch.test_batch_lifecycle import wait_for
from tests.conftest import INTERRUPTIBLE

pytestmark = pytest.mark.slow


def test_a_cancel_whose_reader_left_with_it_still_exits_130(project: Project) -> None:
    marker = "sleep 78.75"
    suite = project.suite([fix_add_task("p", setup=f"{marker}; true")])
    read, write = os.pipe()
    driver = subprocess.Popen(
        project.argv(str(suite), "-j", "1"),
        cwd=project.root,
        env=project.env,
        stdout=write,
        stderr=write,
        stdin=subprocess.DEVNULL,
        **INTERRUPTIBLE,
    )
    os.close(write)
    try:
        wait_for(lambda: running(marker), what="the setup to run")
        os.close(read)  # `cat` went with the Ctrl-C
        driver.send_signal(signal.SIGINT)
        assert driver.wait(60) == 130
    finally:
        if driver.poll() is None:
            driver.kill()
    (batch,) = project.batches()
    assert project.summary(batch)["stopped"] == "cancelled"
