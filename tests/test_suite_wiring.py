"""How the suite itself is run: its order across pytest-xdist workers, and that it still runs
without pytest-xdist (the real-model set runs with `-p no:xdist`)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from types import SimpleNamespace

from tests.conftest import REPO, _spread_slow_first


@dataclass
class FakeItem:
    nodeid: str
    slow: bool = False
    fixturenames: tuple[str, ...] = ()
    module: SimpleNamespace = field(init=False)

    def __post_init__(self) -> None:
        self.module = SimpleNamespace(__name__=self.nodeid.split("::")[0])

    def get_closest_marker(self, name: str):
        return name if name == "slow" and self.slow else None


def _shares(items: list, workers: int) -> list[list]:
    """What xdist's worksteal hands each worker first: equal consecutive runs."""
    out, start, remaining = [], 0, len(items)
    for k in range(workers):
        share = remaining // (workers - k)
        out.append(items[start : start + share])
        start, remaining = start + share, remaining - share
    return out


def test_each_worker_starts_with_slow_modules_kept_whole_and_nothing_is_lost() -> None:
    items = [FakeItem(f"quick{i}.py::t{j}") for i in range(30) for j in range(5)]
    items[40:40] = [FakeItem("ray.py::a", slow=True), FakeItem("ray.py::b", slow=True)]
    items[100:100] = [FakeItem("sig.py::a", slow=True), FakeItem("sig.py::quick")]
    items += [FakeItem("kill.py::a", slow=True), FakeItem("pty.py::a", slow=True)]
    ordered = _spread_slow_first(items, 4)
    assert sorted(map(id, ordered)) == sorted(map(id, items))
    firsts = [share[0].nodeid.split("::")[0] for share in _shares(ordered, 4)]
    assert sorted(firsts) == ["kill.py", "pty.py", "ray.py", "sig.py"]
    at = [item.nodeid for item in ordered]
    assert at.index("ray.py::b") == at.index("ray.py::a") + 1 and at.index("sig.py::quick") == at.index("sig.py::a") + 1
    quick = [item.nodeid for item in ordered if item.nodeid.startswith("quick")]
    assert quick == [item.nodeid for item in items if item.nodeid.startswith("quick")]  # their order kept


def test_modules_sharing_a_worker_wide_fixture_go_to_one_worker_together() -> None:
    items = [FakeItem(f"quick{i}.py::t{j}") for i in range(30) for j in range(5)]
    items[10:10] = [FakeItem("ray.py::a", slow=True, fixturenames=("ray_cluster",))]
    items[60:60] = [FakeItem("cancel.py::local", slow=True), FakeItem("cancel.py::on", fixturenames=("ray_cluster",))]
    items[120:120] = [FakeItem("left.py::a", slow=True, fixturenames=("ray_cluster", "tmp_path"))]
    items += [FakeItem(f"sig{i}.py::a", slow=True) for i in range(3)]
    ordered = _spread_slow_first(items, 4)
    assert sorted(map(id, ordered)) == sorted(map(id, items))
    together = {"ray.py::a", "cancel.py::local", "cancel.py::on", "left.py::a"}
    holding = [k for k, share in enumerate(_shares(ordered, 4)) if together & {item.nodeid for item in share}]
    assert len(holding) == 1
    share = [item.nodeid for item in _shares(ordered, 4)[holding[0]]]
    assert set(share[:4]) == together  # the group starts its worker's run, each module whole
    assert share.index("cancel.py::on") == share.index("cancel.py::local") + 1


def test_with_no_slow_module_the_order_is_unchanged() -> None:
    items = [FakeItem(f"q{i}.py::t") for i in range(9)]
    assert _spread_slow_first(items, 4) == items


def test_the_suite_collects_without_pytest_xdist() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "--collect-only", "-q", "tests/test_suite_wiring.py"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
