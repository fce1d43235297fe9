"""Pruning: old bulky results become stubs that point first at the distilled record (work log), then
at the raw text saved on disk before removal; re-reads of pruned paths are counted."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from arreio.engine.context.feature import ContextHook
from arreio.engine.context.pruning import STUB_MARKER
from arreio.engine.context.settings import load_context_settings
from arreio.engine.core.config import Settings
from arreio.engine.core.tokens import Calibrator
from arreio.engine.loop.report import RunReport
from arreio.engine.session.healing import check_pairing
from tests.conftest import drain, make_runner, unit_end
from tests.context.task_provider import TaskProvider, call

SOURCE = "\n".join(f"def handler_{i}(event):\n    return event['value'] * {i}\n" for i in range(120))


def _run(tmp_path: Path, steps, max_steps: int = 50, **context):
    settings = Settings(context={"window": 12_000, **context}, max_steps=max_steps)
    work = tmp_path / "work"
    work.mkdir(parents=True, exist_ok=True)
    for n in range(6):
        (work / f"h{n}.py").write_text(SOURCE.replace("handler", f"h{n}_handler"))
    hook = ContextHook(load_context_settings(settings.context), tmp_path / "sessions" / "s-test", work, Calibrator())
    runner = make_runner(tmp_path, TaskProvider(steps), settings=settings, hooks=[hook])
    events = asyncio.run(drain(runner))
    return runner, hook, events


def test_old_bulky_results_become_stubs_that_point_at_the_record_first(tmp_path: Path) -> None:
    steps = [call("read_file", f"NOTE: h{n}=ok", path=f"h{n}.py") for n in range(6)]
    runner, hook, events = _run(tmp_path, steps)
    prunes = [e for e in events if e.type == "compaction" and e.kind == "prune"]
    assert prunes and all(e.tokens_after < e.tokens_before for e in prunes)
    stubs = [
        m.tool_result_part.content
        for m in runner.session.messages
        if m.tool_result_part and m.tool_result_part.content.startswith(STUB_MARKER)
    ]
    assert stubs
    stub = stubs[0]
    record, raw = stub.index("work log #"), stub.index("Raw text saved at")
    assert record < raw  # the distilled record comes first, the raw artifact only after it
    assert "defines h0_handler_0, h0_handler_1" in stub
    # Each stub names its block in the session's one artifacts file: exactly the lines of that result.
    artifact = runner.ctx.cwd.parent / stub[raw:].split("saved at ", 1)[1].split(", lines ", 1)[0]
    assert artifact.name == "pruned.txt" and list(artifact.parent.iterdir()) == [artifact]
    lines = artifact.read_text().splitlines()
    for stub_text in stubs:
        where = stub_text.split("saved at ", 1)[1]
        first, last = (int(x) for x in where.split(", lines ", 1)[1].split(" ", 1)[0].split("-"))
        assert f"offset={first}, limit={last - first + 1})" in where
        block = lines[first - 1 : last]
        n = int(block[0].split("def h", 1)[1].split("_", 1)[0])  # which file this result showed
        assert (
            lines[first - 2].startswith("=== pruned result of call ")
            and f"lines {first}–{last} ===" in lines[first - 2]
        )
        assert f"def h{n}_handler_0" in block[0] and f"def h{n}_handler_119" in "\n".join(block)  # nothing destroyed
        assert last == len(lines) or lines[last].startswith("=== ")  # the block ends where the result did
    assert check_pairing(runner.session.messages) == []
    assert hook.stats.pruned_results == len(stubs) and hook.stats.pruned_rereads == 0
    assert unit_end(events).verdict == "success"


def test_a_read_of_a_pruned_path_counts_as_a_reread(tmp_path: Path) -> None:
    steps = [call("read_file", f"NOTE: h{n}=ok", path=f"h{n}.py") for n in range(6)] + [call("read_file", path="h0.py")]
    _, hook, _ = _run(tmp_path, steps)
    assert hook.stats.pruned_rereads == 1
    report = RunReport(
        run_id="r", session_id="s", model="m", verdict="success", exit_code=0, started_at="", ended_at="", duration_s=0
    ).with_section(hook.section())
    assert report.pruned_rereads == 1 and report.pruned_results >= 1 and report.peak_context_tokens > 0


def test_prune_off_keeps_results(tmp_path: Path) -> None:
    steps = [call("read_file", path=f"h{n}.py") for n in range(6)]
    runner, hook, _ = _run(tmp_path, steps, prune=False)
    assert hook.stats.pruned_results == 0
    assert not any(
        m.tool_result_part and m.tool_result_part.content.startswith(STUB_MARKER) for m in runner.session.messages
    )


def test_pruning_appends_prune_lines_that_a_reload_reads_back(tmp_path: Path) -> None:
    """No rewrite of the session per prune; the file, reloaded, is the history the run had,
    and the hook's running token sums match a full recount."""
    from arreio.engine.core.tokens import estimate_message
    from arreio.engine.session.file import Session

    steps = [call("read_file", f"NOTE: h{n}=ok", path=f"h{n}.py") for n in range(6)]
    runner, hook, events = _run(tmp_path, steps)
    session = runner.session
    session.close()
    kinds = [line.split(b'"type":"', 1)[1].split(b'"', 1)[0] for line in session.path.read_bytes().splitlines()]
    prunes = [e for e in events if e.type == "compaction" and e.kind == "prune"]
    assert prunes and kinds.count(b"prune") == len(prunes)
    reloaded, repairs = Session.open(session.path, repair=False)
    assert repairs == [] and reloaded.messages == session.messages
    full = sum(estimate_message(m, hook.meter.profile) for m in session.messages)
    assert abs(hook.meter.sums(session).total - full) < 1e-6 * full


def _many_reads(tmp_path: Path, reads: int, **context):
    """`reads` reads of 2,400-char files in a 40,000-token window, compaction off: pruning alone."""
    work = tmp_path / "work"
    work.mkdir(parents=True, exist_ok=True)
    for n in range(reads):
        (work / f"m{n}.txt").write_text(f"record {n}: " + "amber lattice " * 170 + "\n")
    steps = [call("read_file", f"NOTE: m{n}=ok", path=f"m{n}.txt") for n in range(reads)]
    return _run(tmp_path, steps, max_steps=reads + 5, window=40_000, watermark=0, **context)


def test_pruning_waits_for_a_batch_worth_a_broken_prompt_cache(tmp_path: Path) -> None:
    """Each prune edits an old message, so the provider's cached prefix breaks there: past `prune_at`
    a prune waits until the results to stub hold `prune_step` of the window, instead of stubbing
    one result a turn (it was also ~1.5 ms of every such turn)."""
    runs = {}
    for step in (0.0, 0.05):
        runner, hook, events = _many_reads(tmp_path / f"step-{step}", 150, prune_step=step)
        assert check_pairing(runner.session.messages) == [] and unit_end(events).verdict == "success"
        freed = [e.tokens_before - e.tokens_after for e in events if e.type == "compaction" and e.kind == "prune"]
        runs[step] = freed, hook.stats.pruned_results
    (every_turn, stubbed_then), (batched, stubbed_now) = runs[0.0], runs[0.05]
    assert len(every_turn) >= 50 and len(batched) * 4 <= len(every_turn)  # a batch every few turns, not one a turn
    assert min(batched) > 2 * min(every_turn)  # each batch stubs several results
    assert stubbed_now >= stubbed_then - 10  # and about as much is pruned by the end


def test_the_tail_start_from_running_sums_is_where_the_walk_back_stops() -> None:
    """`PrefixSums.tail_start` (bisection over the running sums) gives `protected_from`'s
    answer (a walk back, one message at a time) for any weights and limit."""
    import random

    from arreio.engine.context.prefix_sums import PrefixSums
    from arreio.engine.context.pruning import protected_from

    class History:  # what PrefixSums reads of a session
        def __init__(self, messages: list) -> None:
            self.messages, self.revision = messages, 0

        def unchanged_prefix(self, revision: int) -> int:
            return len(self.messages)

    rng = random.Random(23)
    for _ in range(500):
        weights = [float(rng.randint(4, 3000)) for _ in range(rng.randint(0, 60))]
        messages = [object() for _ in weights]
        weight_of = dict(zip(map(id, messages), weights))
        sums = PrefixSums(lambda m, w=weight_of: w[id(m)])
        sums.sync(History(messages))
        for limit in (0.0, 3.0, 4.0, rng.uniform(0, sum(weights) + 10), sum(weights), sum(weights) + 1, *weights[-3:]):
            assert sums.tail_start(limit) == protected_from(messages, limit, lambda m, w=weight_of: w[id(m)]), (
                weights,
                limit,
            )


def test_at_the_watermark_a_prune_that_frees_little_is_followed_by_the_compaction(tmp_path: Path) -> None:
    """Near the watermark, pruning whatever left the protected tail freed a result or two a
    turn, just enough to stay under it, and the compaction came a dozen small prunes (each a broken
    prompt cache) later. A prune there that frees less than `prune_step` of the window is followed by
    the compaction in the same turn."""
    work = tmp_path / "work"
    work.mkdir(parents=True, exist_ok=True)
    reads = 120
    for n in range(reads):
        (work / f"m{n}.txt").write_text(f"record {n}: " + "amber lattice " * 170 + "\n")
    steps = [call("read_file", f"NOTE: m{n}=ok", path=f"m{n}.txt") for n in range(reads)]
    runner, hook, events = _run(tmp_path, steps, max_steps=reads + 5, window=40_000, prune_step=0.05)
    assert check_pairing(runner.session.messages) == [] and unit_end(events).verdict == "success"
    window, watermark = 40_000, 0.6
    reductions = [e for e in events if e.type == "compaction"]
    assert hook.stats.compactions >= 1
    for i, event in enumerate(reductions):
        at_watermark = event.kind == "prune" and event.tokens_before >= watermark * window
        small = event.tokens_before - event.tokens_after < 0.05 * window
        if at_watermark and small:
            follower = reductions[i + 1] if i + 1 < len(reductions) else None
            assert follower is not None and follower.kind == "summary", (i, event)


def test_a_compaction_due_now_comes_without_a_small_prune_before_it(tmp_path: Path) -> None:
    """At the watermark, results worth less than a batch were stubbed first (artifacts
    written, a prune line appended, ~a fifth of the compaction turn's work) and then dropped from
    the history by the compaction that followed. They are left to it now: its archive keeps them
    whole, and nothing of the history is lost (the summary takes each call's work-log record)."""
    import json

    work = tmp_path / "work"
    work.mkdir(parents=True, exist_ok=True)
    reads, window, batch = 120, 40_000, 0.2  # a batch bigger than what is left to prune at the watermark
    body = ("amber lattice " * 12 + "\n") * 36  # ~1,300 tokens a result: a stub frees ~1,000 of them
    for n in range(reads):
        (work / f"m{n}.txt").write_text(f"record {n}: {body}\n")
    steps = [call("read_file", f"NOTE: m{n}=ok", path=f"m{n}.txt") for n in range(reads)]
    runner, hook, events = _run(tmp_path, steps, max_steps=reads + 5, window=window, prune_step=batch)
    assert check_pairing(runner.session.messages) == [] and unit_end(events).verdict == "success"
    assert hook.stats.compactions >= 1 and any(e.type == "compaction" and e.kind == "prune" for e in events)
    turn: list = []  # the reductions of the current turn
    for event in events:
        if event.type == "tool_end":
            turn = []
        elif event.type == "compaction":
            if event.kind == "summary" and turn:
                freed = turn[-1].tokens_before - turn[-1].tokens_after
                assert turn[-1].kind != "prune" or freed >= batch * window, turn[-1]
            turn.append(event)
    archives = sorted((tmp_path / "sessions" / "s-test" / "compacted").glob("*.jsonl"))
    archived = [json.loads(line) for path in archives for line in path.read_text().splitlines()]
    kept = [m["parts"][0]["content"] for m in archived if m.get("role") == "tool"]
    assert any(
        not c.startswith(STUB_MARKER) and "record" in c and body.splitlines()[0] in c for c in kept
    )  # as read_file gave it


@pytest.mark.parametrize("depth", [0, 3])
def test_a_batch_prune_frees_its_batch_whatever_its_stubs_weigh(tmp_path: Path, depth: int) -> None:
    """A prune waits for candidates worth `prune_step` of the window: what they free is their weight
    less their stubs'. Weighing the results alone, ~500-token results whose ~250-token stubs name a
    long artifacts path freed half a batch at the watermark, and the compaction followed in the same
    turn (the full suite's deeper temporary folders showed it). In a shallow folder and a deep one,
    every prune frees its batch."""
    for level in range(depth):
        tmp_path = tmp_path / f"a-folder-whose-name-makes-every-stub-longer-{level}"
    work = tmp_path / "work"
    work.mkdir(parents=True, exist_ok=True)
    reads, window, batch = 120, 40_000, 0.2
    for n in range(reads):
        (work / f"m{n}.txt").write_text(f"record {n}: " + "amber lattice " * 170 + "\n")
    steps = [call("read_file", f"NOTE: m{n}=ok", path=f"m{n}.txt") for n in range(reads)]
    runner, hook, events = _run(tmp_path, steps, max_steps=reads + 5, window=window, prune_step=batch)
    assert check_pairing(runner.session.messages) == [] and unit_end(events).verdict == "success"
    assert hook.stats.compactions >= 1
    prunes = [e for e in events if e.type == "compaction" and e.kind == "prune"]
    assert all(e.tokens_before - e.tokens_after >= batch * window for e in prunes), prunes
