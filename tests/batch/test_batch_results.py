"""The batch folder: rows appended whole, a torn last line skipped, one driver at a time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arreio.engine.batch.results import BatchFolder
from arreio.engine.core.errors import UsageError


def test_rows_survive_a_torn_last_line(tmp_path: Path) -> None:
    folder = BatchFolder.create(tmp_path, "20261202-000000-aaaaaa", {"suite": "s.yaml"})
    folder.append({"task": "a", "attempt": 1, "passed": True})
    folder.append({"task": "b", "attempt": 1, "passed": False})
    folder.close()
    with open(folder.results, "a") as sink:
        sink.write('{"task": "c", "attem')  # a driver killed mid-write
    again = BatchFolder.open(tmp_path, "20261202")
    assert [r["task"] for r in again.rows()] == ["a", "b"]
    assert again.finished() == {("a", 1), ("b", 1)}
    assert again.meta()["suite"] == "s.yaml" and again.meta()["version"] == 1
    again.close()


def test_one_driver_at_a_time_and_ids_by_prefix(tmp_path: Path) -> None:
    held = BatchFolder.create(tmp_path, "20261202-000000-aaaaaa", {})
    with pytest.raises(UsageError, match="is being run by another arreio process"):
        BatchFolder.open(tmp_path, "20261202-000000-aaaaaa")
    held.close()
    BatchFolder.create(tmp_path, "20261202-000000-bbbbbb", {}).close()
    with pytest.raises(UsageError, match="ambiguous"):
        BatchFolder.open(tmp_path, "20261202")
    with pytest.raises(UsageError, match="no batch zz"):
        BatchFolder.open(tmp_path, "zz")
    BatchFolder.open(tmp_path, "20261202-000000-a").close()


def test_a_newer_batch_is_refused(tmp_path: Path) -> None:
    folder = BatchFolder.create(tmp_path, "x", {})
    (folder.path / "batch.json").write_text(json.dumps({"version": 99, "id": "x"}))
    with pytest.raises(UsageError, match="newer arreio"):
        folder.meta()
    folder.close()
