"""`checkpoints/index.jsonl` goes through the run's redactor like every file arreio keeps: a file named
after a secret is written there as its label. Undo and diff still find the real names — in the trees
and in each checkpoint's commit, where git keeps them — and format-1 lines (real names) still read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from arreio.engine.checkpoints.index import CheckpointIndex, skipped_line, skipped_of
from arreio.engine.walls.redact import Redactor
from tests.checkpoints.conftest import scripted, tree_state

SECRET = "ghp_Q7fL2mN9pR4sT6vW8xZ1bC3dE5gH7jK9mN1p"


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("DEPLOY_TOKEN", SECRET)
    return SECRET


def test_a_file_named_after_a_secret_is_kept_redacted_and_undo_still_removes_it(
    work: Path, cli, secret_env: str
) -> None:
    (work / ".arreio").mkdir()
    (work / ".arreio" / "config.yaml").write_text("checkpoints: {max_file_mb: 0.001}\n")  # ~1 KB
    (work / "notes.md").write_text("the user's notes\n")
    (work / f"big-{secret_env}.bin").write_bytes(b"b" * 10)
    before = tree_state(work)
    script = (
        '- text: "Working."\n  tool_calls:\n'
        f'    - {{name: write_file, arguments: {{path: out-{secret_env}.txt, content: "hello\\n"}}}}\n'
        f'    - {{name: shell, arguments: {{command: "mkdir -p dir-{secret_env} && touch dir-{secret_env}/x && '
        f'ln -s target link-{secret_env} && head -c 3000 /dev/zero >> big-{secret_env}.bin"}}}}\n'
        '- text: "Done."\n'
    )
    result, _, report = scripted(cli, work, script)
    assert result.exit_code == 0, result.output
    index = (work / ".arreio" / "checkpoints" / "index.jsonl").read_text()
    assert secret_env not in index and "[REDACTED:DEPLOY_TOKEN]" in index
    assert all(json.loads(line)["v"] == 2 for line in index.splitlines())
    shown = cli("diff", "--json")
    assert shown.exit_code == 0 and f"big-{secret_env}.bin" in json.loads(shown.stdout)["skipped"]  # the real name
    undone = cli("undo", "--yes")
    assert undone.exit_code == 0, undone.output
    assert tree_state(work) == before  # created ones gone, the grown one back: found by their real names
    assert secret_env not in (work / ".arreio" / "checkpoints" / "index.jsonl").read_text()


def test_an_index_line_shows_names_redacted_and_the_commit_keeps_them_real(tmp_path: Path) -> None:
    index = CheckpointIndex(tmp_path, durable=False, redactor=Redactor({"DEPLOY_TOKEN": SECRET}))
    written = index.append(
        {
            "type": "checkpoint",
            "id": "ck-1",
            "commit": "c1",
            "tree": "t1",
            "worktree": "/w",
            "run_id": "run-1",
            "skipped": {f"a-{SECRET}": [1, 2, "why"]},
            "changes": {"created": [f"b-{SECRET}"], "modified": [], "deleted": []},
            "calls": [{"id": "call_1", "name": "shell"}],
        }
    )
    assert SECRET not in index.path.read_text() and written["skipped"] == {"a-[REDACTED:DEPLOY_TOKEN]": [1, 2, "why"]}
    message = f"run-1 step 0 before\n\n{skipped_line({f'a-{SECRET}': [1, 2, 'why']})}".encode()
    assert skipped_of(index.records()[0], lambda commit: message) == {f"a-{SECRET}": [1, 2, "why"]}


def test_a_format_1_index_still_reads_with_its_real_names(tmp_path: Path) -> None:
    """A frozen format-1 index (real names in its lines): its runs are listed, its `skipped` taken as is."""
    folder = tmp_path / "checkpoints"
    folder.mkdir()
    shutil.copy(
        Path(__file__).resolve().parents[2] / "fixtures" / "checkpoints" / "index-v1.jsonl", folder / "index.jsonl"
    )
    index = CheckpointIndex(tmp_path)
    runs = index.runs("/home/ana/proj")
    assert [r.run_id for r in runs] == ["run-20260627-160000-aaaaaa"] and runs[0].closed
    never = pytest.fail  # a format-1 line never asks git for its commit's message
    assert skipped_of(runs[0].last, lambda commit: never()) == {
        "big.bin": [20000000, 1782576000000000000, "19.1 MB, over max_file_mb"]
    }
