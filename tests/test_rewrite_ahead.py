"""The controller's rewrite of the test modules' asserts (tests/rewrite_ahead.py): what a worker
would have rewritten itself is cached before it collects."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _pytest.assertion.rewrite import PYC_TAIL

from tests.rewrite_ahead import rewrite_ahead


def test_every_test_module_and_conftest_gets_its_rewritten_form_cached(pytestconfig: pytest.Config, tmp_path: Path):
    if pytestconfig.getoption("assertmode") != "rewrite":
        pytest.skip("asserts are not rewritten in this run (--assert=plain)")
    modules = [tmp_path / "conftest.py", tmp_path / "deeper" / "conftest.py"]
    modules += [tmp_path / f"test_m{n}.py" for n in range(2 * len(os.sched_getaffinity(0)) + 1)]
    modules += [tmp_path / "deeper" / "test_inner.py"]
    helper = tmp_path / "helper.py"  # not a test module: pytest leaves its asserts alone
    for path in [*modules, helper]:
        path.parent.mkdir(exist_ok=True)
        path.write_text("def test_x():\n    value = 1\n    assert value == 2\n")

    rewrite_ahead(pytestconfig, tmp_path)

    cached = {p.name.split(".")[0] + "@" + p.parent.parent.name for p in tmp_path.rglob(f"*{PYC_TAIL}")}
    assert cached == {p.stem + "@" + p.parent.name for p in modules}
    pyc = tmp_path / "__pycache__" / ("test_m0" + PYC_TAIL)
    assert b"@py_assert" in pyc.read_bytes()  # pytest's rewritten form, not plain bytecode
