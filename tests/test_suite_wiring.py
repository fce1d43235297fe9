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
