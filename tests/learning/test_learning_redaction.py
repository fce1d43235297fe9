"""The learning pass writes with the run's one redactor: a proposal refused because it holds a secret
is recorded as refused, and the secret reaches neither the audit journal nor the decision substore
(before issue 15 both got it: the journal had a redactor without the environment's secrets and the
substores had none)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import cli  # noqa: F401  (the shared CliRunner fixture)
from tests.conftest import isolate

SECRET = "hunter2-correct-horse-battery"  # no known token format: only the variable's name marks it


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    isolate(monkeypatch, tmp_path / "home", folder)
    monkeypatch.setenv("DB_PASSWORD", SECRET)
    (folder / "GOAL.md").write_text(f"# Rotate the database password {SECRET}\n\nWrite the runbook.\n")
    (folder / "s.yaml").write_text(
        "- tool_calls:\n"
        "    - {name: write_file, arguments: {path: runbook.md, content: 'rotate it'}}\n"
        "- text: Wrote runbook.md.\n"
    )
    return folder


def test_a_refused_proposals_secret_reaches_no_file(work: Path, cli) -> None:
    result = cli("run", "--goal", "GOAL.md", "--script", "s.yaml", "--learn")
    assert result.exit_code == 0, result.output
    state = work / ".arreio"
    decisions = (state / "memory" / "decision.jsonl").read_text(encoding="utf-8")
    assert '"verdict":"failed"' in decisions.replace(" ", "")  # the proposal holding the secret was refused
    assert "[REDACTED:DB_PASSWORD]" in decisions
    leaked = [p.relative_to(work) for p in state.rglob("*") if p.is_file() and SECRET in p.read_text(errors="replace")]
    assert leaked == []
