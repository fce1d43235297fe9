"""The learning kernel: propose ≠ dispose, fail closed, three buckets, nothing dropped silently."""

from __future__ import annotations

import asyncio

import pytest

from arreio.engine.providers.testing import InMemoryStores
from arreio.learning.gate import ScoreGate, make_gate
from arreio.learning.kernel import LearnDeps, review_and_learn
from arreio.learning.offline_proposer import OfflineProposer
from arreio.learning.proposers import parse_json_list
from arreio.learning.summary import RunSummary, ToolUse


class Refused(Exception):
    message = "memory is full (2200/2200 chars)"


class ListProposer:
    def __init__(self, raws) -> None:
        self.raws = raws
        self.seen_current = None

    async def propose(self, summary, current):
        self.seen_current = current
        if isinstance(self.raws, Exception):
            raise self.raws
        return self.raws


class ExplodingGate:
    """Approves the first proposal, then fails: the pass must apply nothing."""

    def __init__(self) -> None:
        self.calls = 0

    def decide(self, proposal):
        self.calls += 1
        if self.calls > 1:
            raise RuntimeError("judge unavailable")
        return ScoreGate().decide(proposal)


SUMMARY = RunSummary(goal="# Tidy the notes", final_text="Done.", steps=2)


def add(content: str, score: float, target: str = "memory") -> dict:
    return {"target": target, "action": "add", "content": content, "score": score, "rationale": "r"}


def run(raws, *, gate=None, stores=None, summary=SUMMARY, dry_run=False):
    stores = stores or InMemoryStores()
    deps = LearnDeps(proposer=ListProposer(raws), gate=gate or ScoreGate(), stores=stores, dry_run=dry_run)
    return asyncio.run(review_and_learn(summary, deps)), stores


def test_empty_summary_saves_nothing() -> None:
    outcome, stores = run([add("x", 0.9)], summary=RunSummary())
    assert outcome.decisions == [] and outcome.note == "nothing to save" and stores.get("memory").items == []


def test_threshold_is_inclusive() -> None:
    outcome, stores = run([add("exactly", 0.7), add("just below", 0.69)])
    assert (outcome.applied, outcome.rejected) == (1, 1)
    assert stores.get("memory").items == ["exactly"]
    reasons = {d.preview: d.reason for d in outcome.decisions}
    assert reasons["exactly"] == "score 0.7 ≥ threshold 0.7"  # the score as written, not 0.70
    assert reasons["just below"] == "score 0.69 < threshold 0.7 (learn only from validated wins)"


def test_proposer_error_fails_closed() -> None:
    outcome, stores = run(RuntimeError("model timed out"))
    assert outcome.error and "proposer failed" in outcome.error and outcome.decisions == []
    assert outcome.line().startswith("learning gate: failed closed, nothing applied")


def test_gate_error_mid_list_applies_nothing() -> None:
    outcome, stores = run([add("first", 0.95), add("second", 0.95)], gate=ExplodingGate())
    assert outcome.error and "gate failed" in outcome.error
    assert stores.get("memory").items == []  # the first was approved, yet nothing was written


@pytest.mark.parametrize(
    "raw",
    [
        {"target": "memory", "action": "add", "score": 0.9},  # no content
        {"target": "disk", "action": "add", "content": "x", "score": 0.9},  # bad target
        {"target": "memory", "action": "replace", "content": "x", "score": 0.9},  # no old_text
        {"target": "memory", "action": "add", "content": "x", "score": 1.5},  # score out of range
        "just a string",
    ],
)
def test_malformed_proposal_is_rejected_not_raised(raw) -> None:
    outcome, _ = run([raw, add("fine", 0.8)])
    assert (outcome.applied, outcome.rejected, outcome.failed) == (1, 1, 0)
    assert outcome.decisions[0].reason.startswith("malformed proposal")


def test_store_refusal_is_failed_and_recorded() -> None:
    outcome, _ = run([add("big", 0.9)], stores=InMemoryStores(refusal=Refused()))
    assert (outcome.applied, outcome.failed) == (0, 1)
    assert "the store refused it: memory is full" in outcome.decisions[0].reason
    assert outcome.line() == "learning gate: 0 applied, 0 rejected, 1 failed"


def test_replace_and_remove_reach_the_store() -> None:
    stores = InMemoryStores()
    stores.get("user").items = ["Prefers tabs", "Lives in Lisbon"]
    raws = [
        {"target": "user", "action": "replace", "old_text": "tabs", "content": "Prefers spaces", "score": 0.9},
        {"target": "user", "action": "remove", "old_text": "Lisbon", "score": 0.8},
    ]
    outcome, stores = run(raws, stores=stores)
    assert outcome.applied == 2 and stores.get("user").items == ["Prefers spaces"]


def test_dry_run_decides_but_writes_nothing() -> None:
    outcome, stores = run([add("keep", 0.9), add("drop", 0.1)], dry_run=True)
    assert outcome.line() == "learning gate: 1 would apply, 1 rejected"
    assert stores.get("memory").items == []


def test_the_proposer_sees_current_memory() -> None:
    stores = InMemoryStores()
    stores.get("memory").items = ["known fact"]
    proposer = ListProposer([])
    asyncio.run(review_and_learn(SUMMARY, LearnDeps(proposer=proposer, gate=ScoreGate(), stores=stores)))
    assert proposer.seen_current == {"memory": ["known fact"], "user": []}


def test_offline_proposer_keeps_conventions_seen_twice_never_the_runs_diary() -> None:
    from arreio.learning.observations import Observation

    summary = RunSummary(
        goal="# Sum up",
        final_text="ok",
        steps=3,
        tools=[
            ToolUse("read_file", {"path": "a.md"}, False, "1 a"),
            ToolUse("write_file", {"path": "out/s1.md"}, False, "created"),
            ToolUse("shell", {"command": "pytest -q"}, False, "exit code: 0"),
            ToolUse("shell", {"command": "flaky"}, True, "exit code: 1"),
        ],
    )
    assert asyncio.run(OfflineProposer().propose(summary, {"memory": [], "user": []})) == []  # seen once: an episode
    history = [Observation(tests=["pytest -q"], outputs=["out"])]
    first = asyncio.run(OfflineProposer(history).propose(summary, {"memory": [], "user": []}))
    again = asyncio.run(OfflineProposer(history).propose(summary, {"memory": [], "user": []}))
    assert first == again
    assert [(p["action"], p["content"], p["score"]) for p in first] == [
        ("add", "Tests here run with `pytest -q` (each passed in more than one run).", 0.85),
        ("add", "Outputs here go under `out/`.", 0.8),
    ]
    known = asyncio.run(
        OfflineProposer(history).propose(summary, {"memory": [p["content"] for p in first], "user": []})
    )
    assert known == []
    moved = asyncio.run(
        OfflineProposer([Observation(tests=["make test"])]).propose(
            RunSummary(tools=[ToolUse("shell", {"command": "make test"}, False, "exit code: 0")]),
            {"memory": ["Tests here run with `pytest -q` (each passed in more than one run)."], "user": []},
        )
    )
    assert [(p["action"], p["content"]) for p in moved] == [
        ("replace", "Tests here run with `pytest -q`, `make test` (each passed in more than one run).")
    ]


def test_a_users_correction_is_kept_in_their_words() -> None:
    summary = RunSummary(
        user_said=["Write the report.", "No, use tabs for indentation, not spaces.", "thanks, that is all"]
    )
    proposed = asyncio.run(OfflineProposer().propose(summary, {"memory": [], "user": []}))
    assert [(p["target"], p["content"]) for p in proposed] == [
        ("user", "The user asked: No, use tabs for indentation, not spaces.")
    ]


def test_gate_config() -> None:
    assert (
        make_gate({"kind": "validator", "min": 0.8})
        .decide(__import__("arreio.learning.proposals", fromlist=["Proposal"]).Proposal(**add("x", 0.79)))
        .approved
        is False
    )
    with pytest.raises(Exception, match="unknown"):
        make_gate({"kind": "vibes"})


def test_model_answer_parsing() -> None:
    assert parse_json_list('```json\n[{"a": 1}]\n```') == [{"a": 1}]
    with pytest.raises(ValueError):
        parse_json_list("I think nothing is worth saving.")


def test_model_proposer_reads_structured_output_through_the_provider() -> None:
    from arreio.engine.providers.testing import ScriptedProvider
    from arreio.learning.proposers import ModelProposer

    reply = (
        '```json\n[{"target": "user", "action": "add", "content": "Wants summaries in French.", '
        '"score": 0.9, "rationale": "said so twice"}]\n```'
    )
    provider = ScriptedProvider([{"text": reply}])
    outcome, stores = run([], stores=None)  # baseline: an empty proposal list applies nothing
    assert outcome.applied == 0
    deps = LearnDeps(proposer=ModelProposer(provider, "anthropic/claude-x"), gate=ScoreGate(), stores=InMemoryStores())
    outcome = asyncio.run(review_and_learn(SUMMARY, deps))
    assert outcome.applied == 1 and deps.stores.get("user").items == ["Wants summaries in French."]
    prompt = provider.requests[0].messages[0].text
    assert "Do NOT propose" in prompt and "task progress" in prompt and "Goal: # Tidy the notes" in prompt


def test_model_proposer_failure_fails_closed() -> None:
    from arreio.engine.providers.testing import ScriptedProvider
    from arreio.learning.proposers import ModelProposer

    provider = ScriptedProvider([{"error": {"status": 401, "message": "bad key"}}])
    deps = LearnDeps(proposer=ModelProposer(provider, "m"), gate=ScoreGate(), stores=InMemoryStores())
    outcome = asyncio.run(review_and_learn(SUMMARY, deps))
    assert outcome.error and "bad key" in outcome.error


def test_a_lesson_never_empties_a_store() -> None:
    stores = InMemoryStores()
    stores.get("user").items = ["Prefers tabs"]
    outcome, stores = run([{"target": "user", "action": "remove", "old_text": "tabs", "score": 0.95}], stores=stores)
    assert (outcome.applied, outcome.failed) == (0, 1) and stores.get("user").items == ["Prefers tabs"]
    assert "never removes a store's last entry" in outcome.decisions[0].reason
