"""Fallback models: a model that still fails after the harness's retries with a retryable error hands
the step (and the rest of the run) to the next model; never on auth, a bad request or an overflow."""

from __future__ import annotations

import asyncio
import io
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from rich.console import Console

from arreio.cli.render import LiveRenderer
from arreio.engine.core import events as ev
from arreio.engine.core.errors import ConfigError
from arreio.engine.core.model_io import ModelRequest, StreamEvent, TextChunk, Usage
from arreio.engine.loop.fallback import Fallback
from arreio.engine.providers.pricing import estimate_cost
from arreio.engine.providers.testing import FixedClock, ScriptedProvider
from arreio.engine.run.pipeline import PipelineDeps, RunOptions, run_to_end
from arreio.engine.session.file import Session
from arreio.engine.session.healing import check_pairing
from arreio.engine.walls.audit import AuditJournal

MAIN, BACKUP, LAST = "anthropic/claude-sonnet-4-5", "openai/gpt-5", "openai/o3"
OVERLOADED = {"error": {"status": 529, "message": "Overloaded"}}
READ = {
    "tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}],
    "usage": {"input_tokens": 1000, "output_tokens": 100},
}


class Served:
    """Replies served in call order, whatever the history holds (a model that takes over mid-run)."""

    def __init__(self, name: str, replies: list[dict]) -> None:
        self.name, self.replies, self.requests = name, list(replies), []

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        one = ScriptedProvider([self.replies.pop(0)] if self.replies else [{"text": "(no reply left)"}])
        one.first_turn = 10**9  # whatever the history: its one reply
        async for chunk in one.stream(request):
            yield chunk


class Factory:
    def __init__(self, **providers: Served) -> None:
        self.providers = {p.name: p for p in providers.values()}
        self.asked: list[str] = []

    def __call__(self, model: str, **_) -> Served:
        self.asked.append(model)
        return self.providers[model]


def _run(tmp_path: Path, factory: Factory, *, config: dict | None = None, **options) -> tuple[Path, list]:
    work = tmp_path / "work"
    (work / ".arreio").mkdir(parents=True, exist_ok=True)
    (work / "notes.txt").write_text("three notes\n")
    settings = {"retry": {"max_attempts": 2, "base_delay_s": 0.01}, "fallback_models": [BACKUP], **(config or {})}
    (work / ".arreio" / "config.yaml").write_text(json.dumps(settings))
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path / "home")}
    opts = RunOptions(goal_text="# Read the notes\n", cwd=work, env=env, model=MAIN, **options)
    return work, asyncio.run(run_to_end(opts, PipelineDeps(clock=FixedClock(), provider_factory=factory)))


def _journal(work: Path, kind: str) -> list[dict]:
    return [e["payload"] for e in AuditJournal(work / ".arreio", redactor=None).entries() if e["kind"] == kind]


def test_a_model_that_keeps_failing_hands_the_step_and_the_rest_of_the_run_to_the_next(tmp_path: Path) -> None:
    main = Served(MAIN, [READ, OVERLOADED, OVERLOADED, {"text": "never asked"}])
    backup = Served(
        BACKUP,
        [
            {**READ, "usage": {"input_tokens": 2000, "output_tokens": 50}},
            {"text": "Three notes.", "usage": {"input_tokens": 3000, "output_tokens": 20}},
        ],
    )
    work, events = _run(tmp_path, Factory(main=main, backup=backup))
    done = events[-1]
    assert done.verdict == "success" and done.final_text == "Three notes."
    kinds = [e.type for e in events]
    assert kinds.count("retry") == 1 and kinds.count("model_switch") == 1
    assert kinds.index("retry") < kinds.index("model_switch")
    switch = next(e for e in events if e.type == "model_switch")
    assert (switch.from_model, switch.to_model) == (MAIN, BACKUP)
    assert "2 attempts" in switch.reason and "Overloaded" in switch.reason
    assert len(main.requests) == 3 and len(backup.requests) == 2  # the backup served the rest of the run
    assert backup.requests[0].model == BACKUP
    # the reply is stamped with the model that wrote it; the session still pairs
    session, repairs = Session.open(next((work / ".arreio" / "sessions").glob("*.jsonl")), repair=False)
    assert [m.model for m in session.messages if m.role == "assistant"] == [MAIN, BACKUP, BACKUP]
    assert repairs == [] and check_pairing(session.messages) == []
    # one journal entry, the event's own fields
    entries = _journal(work, "model_switch")
    assert entries == [
        {
            "run_id": entries[0]["run_id"],
            "session_id": session.id,
            "from": MAIN,
            "to": BACKUP,
            "reason": switch.reason,
            "fallback": True,
            "agent": None,
        }
    ]
    # cost counted per model, each at its own price
    report = json.loads((work / done.report_path).read_text())
    per_model = report["cost_by_model"]
    assert set(per_model) == {MAIN, BACKUP}
    assert (per_model[MAIN]["input_tokens"], per_model[MAIN]["output_tokens"]) == (1000, 100)
    assert (per_model[BACKUP]["input_tokens"], per_model[BACKUP]["output_tokens"]) == (5000, 70)
    main_cost = estimate_cost(MAIN, Usage(input_tokens=1000, output_tokens=100))
    backup_cost = estimate_cost(BACKUP, Usage(input_tokens=5000, output_tokens=70))
    assert per_model[MAIN]["cost_usd"] == pytest.approx(main_cost)
    assert report["cost_usd"] == pytest.approx(main_cost + backup_cost) and done.cost_usd == report["cost_usd"]
    assert report["model_switches"] == [{"from": MAIN, "to": BACKUP, "reason": switch.reason}]
    line = ev.event_to_json(switch)
    assert json.loads(line) == {
        "type": "model_switch",
        "from": MAIN,
        "to": BACKUP,
        "reason": switch.reason,
        "withdraws_text": False,
        "agent": None,
    }
    assert ev.event_from_json(line) == switch


@pytest.mark.parametrize(
    "fault,why",
    [
        ({"status": 429, "message": "rate limited", "retry_after": 600}, "more than the 120s allowed"),
        ({"status": 500, "message": "Internal server error"}, "2 attempts"),
        ({"kind": "retryable", "message": "stream ended before the reply was complete"}, "2 attempts"),
    ],
)
def test_every_retryable_class_switches(tmp_path: Path, fault: dict, why: str) -> None:
    main = Served(MAIN, [{"error": fault}, {"error": fault}])
    backup = Served(BACKUP, [{"text": "done by the backup"}])
    _, events = _run(tmp_path, Factory(main=main, backup=backup))
    switch = next(e for e in events if e.type == "model_switch")
    assert why in switch.reason and events[-1].verdict == "success"


@pytest.mark.parametrize(
    "fault,code",
    [
        ({"status": 401, "message": "invalid x-api-key"}, 5),
        ({"status": 400, "message": "messages: invalid request"}, 1),
        ({"kind": "context_overflow", "message": "prompt is too long"}, 1),
    ],
)
def test_no_switch_on_auth_a_bad_request_or_an_overflow(tmp_path: Path, fault: dict, code: int) -> None:
    main = Served(MAIN, [{"error": fault}] * 3)
    backup = Served(BACKUP, [{"text": "must not be asked"}])
    factory = Factory(main=main, backup=backup)
    work, events = _run(tmp_path, factory)
    assert "model_switch" not in [e.type for e in events]
    assert events[-1].verdict == "failed" and events[-1].exit_code == code
    assert backup.requests == [] and BACKUP not in factory.asked
    assert _journal(work, "model_switch") == []


def test_the_chain_is_tried_in_order_and_a_spent_chain_fails_with_the_last_reason(tmp_path: Path) -> None:
    main = Served(MAIN, [OVERLOADED] * 2)
    backup = Served(BACKUP, [{"error": {"status": 503, "message": "Slow Down"}}] * 2)
    last = Served(LAST, [{"error": {"status": 502, "message": "Bad gateway"}}] * 2)
    _, events = _run(
        tmp_path,
        Factory(main=main, backup=backup, last=last),
        config={"fallback_models": [MAIN, BACKUP, "gpt-5", LAST]},
    )  # itself and a repeat are skipped
    switches = [(e.from_model, e.to_model) for e in events if e.type == "model_switch"]
    assert switches == [(MAIN, BACKUP), (BACKUP, LAST)]
    assert events[-1].verdict == "failed" and "Bad gateway" in events[-1].message


def test_the_flag_replaces_the_config_chain(tmp_path: Path) -> None:
    main = Served(MAIN, [OVERLOADED] * 2)
    last = Served(LAST, [{"text": "from the flag's model"}])
    _, events = _run(tmp_path, Factory(main=main, last=last), fallback_models=[LAST])
    assert [e.to_model for e in events if e.type == "model_switch"] == [LAST]


def test_a_mistyped_fallback_model_fails_before_the_run_starts(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        _run(tmp_path, Factory(), fallback_models=["gemini-pro"])
    assert info.value.exit_code == 5 and "fallback model" in info.value.message and "gemini-pro" in info.value.message
    assert not list((tmp_path / "work" / ".arreio").glob("sessions/*.jsonl"))


def test_a_retired_model_stays_retired_for_the_units_and_agents_that_ask_for_it() -> None:
    made: list[str] = []
    chain = Fallback(models=[BACKUP, LAST], make=lambda m: made.append(m) or f"provider:{m}")
    assert chain.route(MAIN, "p-main") == (MAIN, "p-main")
    assert chain.next(MAIN) == (BACKUP, f"provider:{BACKUP}")
    assert chain.route(MAIN, "p-main") == (BACKUP, f"provider:{BACKUP}")
    assert chain.next(BACKUP) == (LAST, f"provider:{LAST}")
    assert chain.route(MAIN, "p-main") == (LAST, f"provider:{LAST}")  # the newest replacement
    assert chain.next(LAST) is None and made == [BACKUP, LAST]


def test_the_live_and_text_views_show_a_switch_as_one_line() -> None:
    out = io.StringIO()
    view = LiveRenderer(Console(file=out, width=200, color_system=None), answer=False)
    view(ev.TextDelta(text="ignored in the progress view"))
    view(ev.ModelSwitch(from_model=MAIN, to_model=BACKUP, reason="the model call still failed after 6 attempts"))
    assert out.getvalue() == f"⇄ model {MAIN} → {BACKUP}: the model call still failed after 6 attempts\n"


class Cut:
    """A stream that stops without its end every time (a model whose connection keeps dropping)."""

    name = MAIN

    def __init__(self) -> None:
        self.calls = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.calls += 1
        yield TextChunk(text="half")


def test_a_stream_cut_every_time_switches(tmp_path: Path) -> None:
    cut, backup = Cut(), Served(BACKUP, [{"text": "whole answer"}])
    factory = Factory(backup=backup)
    factory.providers[MAIN] = cut
    _, events = _run(tmp_path, factory)
    assert cut.calls == 2 and events[-1].final_text == "whole answer"
    assert "ended before it was complete" in next(e for e in events if e.type == "model_switch").reason
