"""Compaction: the pure decisions (watermark, cut point, plan), the summary format, and the hook on a
real runner over a real session file (atomic rewrite, verbatim tail, fallback and back-off)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from arreio.engine.context.compaction import (
    fallback_summary,
    find_cut_point,
    prepare_compaction,
    render_summary,
    should_compact,
    summariser_backoff,
)
from arreio.engine.context.feature import ContextHook
from arreio.engine.context.settings import load_context_settings
from arreio.engine.core.config import Settings
from arreio.engine.core.messages import Message, TextPart, ToolCallPart, ToolResultPart
from arreio.engine.core.summary import is_summary, parse_summary, parse_summary_message, summarised_turns
from arreio.engine.core.tokens import Calibrator, estimate_message
from arreio.engine.session.file import Session
from arreio.engine.session.healing import check_pairing, heal
from tests.conftest import drain, make_runner, unit_end
from tests.context.task_provider import TaskProvider, call


def _history(groups: list[tuple[int, int]]) -> list[Message]:
    """A user goal, then per group: an assistant turn with `calls` calls (0 = a text-only turn) and
    their results, sometimes followed by a user message."""
    messages = [Message.user("Goal: tidy the repo. You must keep the tests green.")]
    for g, (calls, size) in enumerate(groups):
        parts = [TextPart(text=f"NOTE: step{g}=done")] + [
            ToolCallPart(id=f"c{g}_{j}", name="read_file", arguments={"path": f"f{g}_{j}.py"}) for j in range(calls)
        ]
        messages.append(Message.assistant(parts, model="m"))
        for j in range(calls):
            messages.append(
                Message.tool_result(ToolResultPart(call_id=f"c{g}_{j}", name="read_file", content="x\n" * size))
            )
        if g % 5 == 4:
            messages.append(Message.user("please continue"))
    return messages


def test_should_compact_triggers_at_the_watermark_not_before() -> None:
    assert not should_compact(59_999, 100_000, 0.6)
    assert should_compact(60_000, 100_000, 0.6)
    assert should_compact(95_000, 100_000, 0.9) and not should_compact(89_000, 100_000, 0.9)
    assert not should_compact(99_000, 100_000, 0) and not should_compact(99_000, 100_000, None)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(1, 80)), min_size=1, max_size=30), st.integers(0, 3000))
def test_a_cut_never_orphans_and_keeps_the_tail_verbatim(groups: list[tuple[int, int]], keep: int) -> None:
    messages = _history(groups)
    plan = prepare_compaction(messages, keep, estimate_message)
    if plan is None:
        assert sum(1 for m in messages[1:] if m.role == "assistant") <= 1 or len(groups) == 1
        return
    assert messages[plan.cut].role == "assistant"
    assert all(a is b for a, b in zip(plan.tail, messages[plan.cut :]))  # the very same messages, untouched
    compacted = [render_summary(fallback_summary(plan), plan.meta), *plan.tail]
    assert check_pairing(compacted) == []
    healed, repairs = heal(compacted)
    assert repairs == [] and len(healed) == len(compacted)
    # A second compaction of the compacted history folds the first summary in and stays clean.
    again = prepare_compaction(compacted + _history(groups)[1:], keep, estimate_message)
    if again is not None:
        assert again.previous is not None and again.meta.number == 2
        assert check_pairing([render_summary(fallback_summary(again), again.meta), *again.tail]) == []


def test_cut_point_keeps_at_least_the_tail_budget() -> None:
    messages = _history([(1, 50)] * 20)
    cut = find_cut_point(messages, 300, estimate_message)
    tail = sum(estimate_message(m) for m in messages[cut:])
    assert tail >= 300
    assert sum(estimate_message(m) for m in messages[cut + 2 :]) < 300 + 200  # and not much more


def test_summary_round_trips_and_counts_turns() -> None:
    messages = _history([(2, 5)] * 6)
    plan = prepare_compaction(messages, 50, estimate_message)
    message = render_summary(fallback_summary(plan), plan.meta)
    assert is_summary(message)
    summary, meta = parse_summary_message(message)
    assert meta == plan.meta and summarised_turns([message]) == plan.meta.turns
    assert summary.goal.startswith("Goal: tidy the repo")
    assert any("must keep the tests green" in c for c in summary.constraints)
    assert all(f"f{g}_0.py" in " ".join(summary.files_touched) for g in range(plan.meta.turns))


def test_parse_summary_accepts_fenced_json_and_refuses_prose() -> None:
    assert parse_summary('```json\n{"goal": "g", "done": "one thing"}\n```').done == ["one thing"]
    assert parse_summary("I could not do it.") is None
    assert parse_summary("{}") is None


def test_backoff_grows_and_caps() -> None:
    assert [summariser_backoff(n) for n in range(7)] == [0, 1, 2, 4, 8, 16, 16]


def _runner(tmp_path: Path, provider, window: int = 12_000, **context):
    settings = Settings(context={"window": window, "keep_tail_ratio": 0.25, **context})
    work = tmp_path / "work"
    work.mkdir(parents=True, exist_ok=True)
    (work / "big.txt").write_text("some words on a line\n" * 500)
    hook = ContextHook(load_context_settings(settings.context), tmp_path / "sessions" / "s-test", work, Calibrator())
    return make_runner(tmp_path, provider, settings=settings, hooks=[hook]), hook


READS = [call("read_file", f"NOTE: read{i}=yes", path="big.txt") for i in range(8)]


def test_compaction_triggers_at_the_watermark_and_rewrites_the_session_atomically(tmp_path: Path) -> None:
    provider = TaskProvider(READS)
    runner, _hook = _runner(tmp_path, provider, prune=False)
    path = runner.session.path
    inode = os.stat(path).st_ino
    # held by a second name, so a later rewrite's temp file cannot be given the freed inode number
    os.link(path, tmp_path / "held.jsonl")
    events = asyncio.run(drain(runner))
    compactions = [e for e in events if e.type == "compaction"]
    assert compactions and all(e.tokens_after < e.tokens_before for e in compactions)
    assert all(e.tokens_before >= 0.6 * 12_000 for e in compactions)  # never before the watermark
    assert os.stat(path).st_ino != inode  # replaced whole (temp file + os.replace), not edited in place
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".") or p.suffix == ".tmp"]
    loaded, repairs = Session.open(path)
    assert repairs == [] and check_pairing(loaded.messages) == []
    assert is_summary(loaded.messages[0])
    assert [m.model_dump() for m in loaded.messages] == [m.model_dump() for m in runner.session.messages]
    final = unit_end(events).final_text
    assert unit_end(events).verdict == "success" and all(f'"read{i}": "yes"' in final for i in range(8))
    assert (tmp_path / "sessions" / "s-test" / "compacted" / "001.jsonl").is_file()  # the head is archived


def test_the_kept_tail_is_verbatim_after_a_real_compaction(tmp_path: Path) -> None:
    runner, _hook = _runner(tmp_path, TaskProvider(READS[:5]), prune=False)
    rewrites: list[tuple[list[str], list[str]]] = []
    real_rewrite = runner.session.rewrite

    def recording_rewrite(messages):
        rewrites.append(
            ([m.model_dump_json() for m in runner.session.messages], [m.model_dump_json() for m in messages])
        )
        real_rewrite(messages)

    runner.session.rewrite = recording_rewrite
    asyncio.run(drain(runner))
    assert rewrites
    for before, after in rewrites:
        tail = after[1:]
        assert tail and before[-len(tail) :] == tail  # byte-for-byte the last messages, in order
    on_disk, _ = Session.open(runner.session.path)
    assert [m.model_dump_json() for m in on_disk.messages][: len(rewrites[-1][1])] == rewrites[-1][1]


def test_a_failing_summariser_falls_back_without_losing_turns_and_backs_off(tmp_path: Path) -> None:
    provider = TaskProvider(READS, fail_summaries=True)
    runner, _hook = _runner(tmp_path, provider, prune=False)
    events = asyncio.run(drain(runner))
    warnings = [e for e in events if e.type == "warning" and e.code == "compaction_fallback"]
    compactions = [e for e in events if e.type == "compaction"]
    assert len(compactions) >= 3 and len(warnings) == len(compactions)
    assert provider.summary_requests < len(compactions)  # backing off: not asked every time
    summary = runner.session.messages[0].text
    # Every call of every compacted turn is still on record, and the run still knows every fact.
    for i in range(8):
        assert f"NOTE: read{i}=yes" in summary or any(f"NOTE: read{i}=yes" in m.text for m in runner.session.messages)
    assert unit_end(events).verdict == "success" and all(
        f'"read{i}": "yes"' in unit_end(events).final_text for i in range(8)
    )
    assert check_pairing(runner.session.messages) == []


def test_watermark_zero_turns_compaction_off(tmp_path: Path) -> None:
    runner, _hook = _runner(tmp_path, TaskProvider(READS), watermark=0)
    events = asyncio.run(drain(runner))
    assert not [e for e in events if e.type == "compaction" and e.kind == "summary"]
    assert not is_summary(runner.session.messages[0])


def test_the_archived_head_holds_no_secret_the_history_carried(tmp_path: Path) -> None:
    """The session file is redacted line by line on the way in; the archive of a compacted head is
    written from the history in memory (what the model saw), so it goes through the redactor too."""
    from arreio.engine.walls.redact import Redactor

    secret = "s3cr3t-Value-9f8e7d6c5b4a"
    runner, _hook = _runner(tmp_path, TaskProvider(READS), prune=False)
    (tmp_path / "work" / "big.txt").write_text(f"token={secret} and some words on a line\n" * 500)
    runner.session.redactor = Redactor({"DEPLOY_TOKEN": secret})
    events = asyncio.run(drain(runner))
    assert [e for e in events if e.type == "compaction"]
    archive = tmp_path / "sessions" / "s-test" / "compacted" / "001.jsonl"
    assert archive.is_file() and "[REDACTED:DEPLOY_TOKEN]" in archive.read_text()
    assert secret not in archive.read_text() and secret.encode() not in runner.session.path.read_bytes()


def test_pruned_results_and_the_work_log_hold_no_secret_either(tmp_path: Path) -> None:
    """Pruning writes a result's text to the artifacts file and a line per call to the work log, from
    the history in memory: both go through the run's redactor, as the session file does."""
    from arreio.engine.walls.redact import Redactor

    secret = "s3cr3t-Value-9f8e7d6c5b4a"
    reads = [call("read_file", f"NOTE: read{i}=yes", path=f"{secret}.txt") for i in range(8)]
    runner, _hook = _runner(tmp_path, TaskProvider(reads), watermark=0.95)
    (tmp_path / "work" / f"{secret}.txt").write_text(f"token={secret} and some words on a line\n" * 500)
    runner.session.redactor = Redactor({"DEPLOY_TOKEN": secret})
    events = asyncio.run(drain(runner))
    assert [e for e in events if e.type == "compaction" and e.kind == "prune"]
    session_dir = tmp_path / "sessions" / "s-test"
    written = [p for p in session_dir.rglob("*") if p.is_file()]
    assert any(p.parent.name == "artifacts" for p in written) and any(p.name == "worklog.jsonl" for p in written)
    leaks = [p.name for p in written if secret.encode() in p.read_bytes()]
    assert leaks == [] and "[REDACTED:DEPLOY_TOKEN]" in (session_dir / "worklog.jsonl").read_text()


def test_the_fallback_summary_says_what_a_pruned_call_showed_not_what_its_stub_holds() -> None:
    """A result pruned before the compaction is only its stub in the head; the summary takes
    the work log's record of the call (made as it ran) instead of digesting the stub."""
    read = ToolCallPart(id="c1", name="read_file", arguments={"path": "src/app.py"})
    stub = "[pruned to save context: the 2114-char result of this call was removed from the conversation.]"
    head = [
        Message.user("Fix the app."),
        Message.assistant([read], model="m"),
        Message.tool_result(ToolResultPart(call_id="c1", name="read_file", content=stub)),
    ]
    plan = prepare_compaction([*head, Message.assistant([TextPart(text="done")], model="m")], 1.0, lambda m: 10.0)
    assert plan is not None and plan.head == head
    plain = fallback_summary(plan)
    plan.records = {"c1": ('read_file(path="src/app.py")', "ok, 27 lines / 2114 chars; defines main")}
    recorded = fallback_summary(plan)
    assert any("first line: [pruned" in line for line in plain.done)  # the stub, digested
    assert recorded.done == ['read_file(path="src/app.py") → ok, 27 lines / 2114 chars; defines main']
    # The label is the work log's too (a resumed session's log holds it as written: redacted).
    plan.records = {"c1": ('read_file(path="[REDACTED:TOKEN]")', "ok, 27 lines / 2114 chars; defines main")}
    assert fallback_summary(plan).done == [
        'read_file(path="[REDACTED:TOKEN]") → ok, 27 lines / 2114 chars; defines main'
    ]
