"""MEMORY.md and USER.md keep no secret, whoever writes: the `memory` tool in a scripted run, the
learning pass (`--learn`, a scripted proposer) and `arreio memory add` refuse content the redactor
would change — an environment value in any spelling, a token, `DB password for staging: …`, a
docker `auth` — with a reason the writer can act on. An entry an older arreio stored is hidden from
the prompt (`[BLOCKED: …]`), still removable by its handle."""

from __future__ import annotations

import asyncio
import base64
import json
import os
from pathlib import Path

import pytest

from arreio.engine.features.defaults import engine_features
from arreio.engine.providers.testing import FixedClock, ScriptedProvider
from arreio.engine.run.pipeline import PipelineDeps, RunOptions, run_to_end
from arreio.learning.stage import LearningStage
from arreio.memory.feature import MemoryFeature
from tests.conftest import goal_folder

PASSWORD = "hunter2-staging-7731"
DOCKER_AUTH = base64.b64encode(b"deploy:Zr9vK2mQ7xLp4sWt").decode()
ENV_KEY = "Xq7vN2pL9rT4wK8mB3cD6fGh1jZ5"  # in the environment only
ENV_KEY_B64 = base64.b64encode(ENV_KEY.encode()).decode()
SECRET_NOTES = [
    f"DB password for staging: {PASSWORD}",
    f'Docker login for ghcr.io: {{"auth": "{DOCKER_AUTH}"}}',
    f"Vendor API key (base64, for the X-Auth header): {ENV_KEY_B64}",
]
KEPT = "The staging database is db.staging.internal, port 5432."
SECRETS = [PASSWORD, DOCKER_AUTH, ENV_KEY, ENV_KEY_B64[:20], "Zr9vK2mQ7xLp4sWt"]


def _leaks(state: Path) -> list[str]:
    return sorted(
        f"{p.relative_to(state)}: {s[:6]}…"
        for p in state.rglob("*")
        if p.is_file()
        for s in SECRETS
        if s.encode() in p.read_bytes()
    )


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = goal_folder(tmp_path, monkeypatch, "# Staging notes\n\nRemember how to reach staging.\n")
    monkeypatch.setenv("VENDOR_API_KEY", ENV_KEY)
    return folder


def test_the_memory_tool_refuses_secrets_in_a_scripted_run(work: Path, cli) -> None:
    def adds(*notes: str) -> list[dict]:
        return [{"name": "memory", "arguments": {"action": "add", "content": note}} for note in notes]

    # Two turns: a third refusal in one turn would tell the model to stop using the tool.
    script = [
        {"text": "Saving notes.", "tool_calls": adds(KEPT, *SECRET_NOTES[:2])},
        {"text": "One more.", "tool_calls": adds(SECRET_NOTES[2])},
        {"text": "Done."},
    ]
    (work / "s.json").write_text(json.dumps(script))
    result = cli("run", "--goal", "GOAL.md", "--script", "s.json", "--json", "--yes")
    assert result.exit_code == 0, result.output
    ends = [json.loads(line) for line in result.stdout.splitlines() if '"tool_end"' in line]
    refused = [e["preview"] for e in ends if e["is_error"]]
    assert len(refused) == 3 and all(p.startswith("refused: the content holds") for p in refused), refused
    assert "the value of $VENDOR_API_KEY" in refused[2] and "looks like a credential" in refused[0]
    assert (work / ".arreio" / "MEMORY.md").read_text().strip() == KEPT
    assert _leaks(work / ".arreio") == [] and not any(s in result.stdout for s in SECRETS)


def test_the_learning_pass_refuses_secrets_from_a_scripted_proposer(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / ".arreio").mkdir(parents=True)
    (work / ".arreio" / "config.yaml").write_text("learning: {proposer_model: anthropic/proposer}\n")
    proposals = [
        {"target": "memory", "action": "add", "content": note, "score": 0.9, "rationale": "needed later"}
        for note in [*SECRET_NOTES, KEPT]
    ]
    providers = {
        "anthropic/main": ScriptedProvider([{"text": "Done."}]),
        "anthropic/proposer": ScriptedProvider([{"text": json.dumps(proposals)}]),
    }
    deps = PipelineDeps(
        clock=FixedClock(), provider_factory=lambda model, **_: providers[model], learning=LearningStage()
    )
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path / "home"), "VENDOR_API_KEY": ENV_KEY}
    events = asyncio.run(
        run_to_end(
            RunOptions(goal_text="# Staging notes\n", cwd=work, env=env, model="anthropic/main", learn=True), deps
        )
    )
    done = next(e for e in events if e.type == "learning_pass_done")
    assert (done.applied, done.failed) == (1, 3)  # the gate passed all four; the store refused three
    assert (work / ".arreio" / "MEMORY.md").read_text().strip() == KEPT
    decisions = (work / ".arreio" / "memory" / "decision.jsonl").read_text()
    assert decisions.count('"verdict": "failed"') == 3 and "refused: the content holds" in decisions
    assert _leaks(work / ".arreio") == []


def test_memory_add_on_the_command_line_refuses_a_secret(work: Path, cli) -> None:
    result = cli("memory", "add", SECRET_NOTES[0])
    assert result.exit_code == 2 and "refused: the content holds" in result.output
    assert not (work / ".arreio" / "MEMORY.md").exists() or PASSWORD not in (work / ".arreio" / "MEMORY.md").read_text()
    assert cli("memory", "add", KEPT).exit_code == 0


def test_an_entry_stored_before_is_hidden_from_the_prompt_and_removable(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / ".arreio").mkdir(parents=True)
    (work / ".arreio" / "MEMORY.md").write_text(f"{KEPT}\n§\n{SECRET_NOTES[0]}\n")  # an older arreio kept it
    provider = ScriptedProvider([{"text": "Done."}])
    features = engine_features(MemoryFeature())
    deps = PipelineDeps(clock=FixedClock(), provider_factory=lambda model, **_: provider, features=features)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path / "home")}
    events = asyncio.run(run_to_end(RunOptions(goal_text="# Look\n", cwd=work, env=env, model="anthropic/main"), deps))
    assert events[-1].verdict == "success"
    prompt = provider.requests[0].model_dump_json()
    assert KEPT in prompt and PASSWORD not in prompt
    assert "[BLOCKED: this entry holds a secret; it is not shown." in prompt and '"blocked:' in prompt
