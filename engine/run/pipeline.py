"""The one conveyor every run goes through (docs/architecture.md section 2).

    edge → orchestrator → assembly → execution → gates → learning → output funnel

`run_pipeline` is an async generator of events; `run_to_end` drains it. Entry points (the CLI's `run`,
`--resume`, `approve`, tests) only build `RunOptions` and `PipelineDeps`. Later stages plug in
here, once, for all of them. The run's outcome is read from its events (the last `unit_end` of the
run's own runner), never from shared state.

The stream ends in its result on every path a caller can read: a cancel (Ctrl-C, SIGTERM, a task
cancelled) still yields the calls it cut short (`tool_end`, interrupted) and `done` (cancelled, 130),
and the cancel goes on from the next step of the stream (the caller's `async for` raises it then). An
`ArreioError` mid-run (a hook's, a unit's model that cannot be built) is a failed run: `done` carries
its exit code and message, and nothing is raised. Any other exception (a bug) ends the stream in
`done` (failed, 1) too, and then goes on to the caller.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from arreio.engine.core import events as ev
from arreio.engine.core.errors import ArreioError, Cancelled
from arreio.engine.core.ids import iso_ms
from arreio.engine.core.paths import display_path
from arreio.engine.core.ports import Provider
from arreio.engine.judgement.gates import GateInputs, Judge, ModelJudge, OfflineJudge, gated_outcome, run_gates
from arreio.engine.loop.feature import Feature
from arreio.engine.loop.hooks import overrides
from arreio.engine.loop.outcome import CANCELLED, Outcome
from arreio.engine.loop.report import RunReport, Section, write_report
from arreio.engine.loop.runner import Runner
from arreio.engine.loop.totals import Totals
from arreio.engine.providers import registry
from arreio.engine.providers.endpoint import endpoint_of, is_local
from arreio.engine.providers.pricing import cache_share, costs_by_model, run_cost
from arreio.engine.run.goal import read_waiting_goal
from arreio.engine.run.learning import run_learning
from arreio.engine.run.prepare import CONTINUE, PipelineDeps, PreparedRun, RunOptions, prepare, resolve_run_tools
from arreio.engine.run.units import UnitRunner, goal_title
from arreio.engine.tools.sandbox import run_sandbox
from arreio.engine.walls.delta_guard import DeltaGuard

__all__ = ["PipelineDeps", "RunOptions", "after_cancel", "run_pipeline", "run_sync", "run_to_end"]

CUT_SHORT = "interrupted: the run was cancelled before the call finished"
FAILED_SHORT = "interrupted: the run failed before the call finished"


def after_cancel(event: Any) -> bool:
    """Whether `event` is one a cancelled run's stream ends with: a call the cancel cut short, or the
    cancelled `done` (a view that ends at the cancel shows neither)."""
    return (event.type == "done" and event.verdict == "cancelled") or (
        event.type == "tool_end" and event.status == "interrupted" and event.preview == CUT_SHORT
    )


# -- the conveyor -------------------------------------------------------------------------------
async def run_pipeline(options: RunOptions, deps: PipelineDeps | None = None) -> AsyncIterator[ev.Event]:
    """Run one goal end to end, yielding every event; the last one is always `done`."""
    deps = deps or PipelineDeps()
    clock = deps.clock
    options = await read_waiting_goal(options)  # a FIFO goal must not block the loop: a cancel could not reach it
    run = prepare(options, deps)
    ctx = run.ctx
    started_at, t0 = clock.now(), clock.monotonic()
    run_dir = ctx.state_dir / "runs" / ctx.run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    events_path = run_dir / "events.jsonl"
    session, redactor = run.session, ctx.redactor
    session.durable = run.settings.fsync
    session.redactor, guard = redactor, DeltaGuard(redactor)  # secrets never reach the session or events
    tools = run.tools if run.tools is not None else resolve_run_tools(ctx, run.features, options)
    totals = Totals()
    runner = Runner(
        provider=run.provider,
        model=run.model,
        session=session,
        tools=tools,
        ctx=ctx,
        system=session.header.system,
        totals=totals,
        hooks=[hook for feature in run.features for hook in feature.hooks(ctx)],
    )
    outcome = CANCELLED
    cancel: BaseException | None = None  # a cancel the stream ended on: raised on after `done`
    fault: Exception | None = None  # a bug the stream ended on: raised on after `done`
    closing: list[Any] = []  # what a cancel or failure cut short (calls, units), closed on the way out
    # The features that look at events (most do not: their `on_event` is Feature's no-op).
    observers = [f for f in run.features if overrides(f, Feature, "on_event")]
    learns = bool(options.learn or run.learn)
    seen: list[
        Any
    ] = []  # the run's events, for the learning pass (kept only when it may run: a long run's events add up)
    with open(events_path, "w", encoding="utf-8") as sink:
        # The run's start as file times count it (the gates compare the files' times with it): the
        # events file's own, just made, by the filesystem's clock (coarse on some: a second's margin).
        wall_start = os.fstat(sink.fileno()).st_mtime - 1

        # What started and has not ended yet, in the order it started: (type, agent, id) -> the call's
        # name; the run's and its sub-agents'. A cancel or failure closes them below, innermost first.
        opened: dict[tuple[str, str | None, str], str] = {}

        def emit(event: Any, redacted: bool = False) -> Any:
            # `redactor.model` and `event_to_json` inlined: the event is serialised once, not twice,
            # when the redactor changes nothing (nearly always). `redacted`: a streamed
            # delta the guard released, its text redacted there; its line is not scanned again
            # (escaping a clean text as JSON adds no secret: the corpus tests redaction JSON-safe).
            line = ev.event_to_json(event)
            clean = line if redacted else redactor.text(line)
            if clean != line:
                event = type(event).model_validate_json(clean)
                line = ev.event_to_json(event)
            if event.type == "tool_start":
                opened[("tool", event.agent, event.call_id)] = event.name
            elif event.type == "tool_end":
                opened.pop(("tool", event.agent, event.call_id), None)
            elif event.type == "unit_start":
                opened[("unit", event.agent, event.unit_id)] = ""
            elif event.type == "unit_end":
                opened.pop(("unit", event.agent, event.unit_id), None)
            sink.write(line + "\n")
            for feature in observers:
                feature.on_event(ctx, event)
            return event

        session.mark_run(ctx.run_id, "start", iso_ms(started_at))
        try:
            yield emit(
                ev.RunStart(
                    run_id=ctx.run_id,
                    session_id=session.id,
                    model=run.model,
                    cwd=str(options.cwd),
                    resumed=run.resumed,
                    model_chosen=run.model_chosen,
                    instructions=list(session.header.instructions),
                )
            )
            for warning in run.warnings:
                yield emit(ev.Warning_(message=warning, code="session_repaired"))
            units = UnitRunner(
                plan=run.plan,
                runner=runner,
                tools=tools,
                goal=run.goal,
                resume_only=run.resume_only,
                unit_provider=lambda model, script, first_turn: _unit_provider(run, model, script, first_turn),
                max_steps=options.max_steps,
                default_model=run.model,
                plan_dir=Path(run.plan.source).parent if run.plan.from_file else options.cwd,
                progress=run.progress,
                output_schema=run.output_schema,
            )
            last_end: ev.UnitEnd | None = None
            async for event in units.run():
                if event.type == "unit_end" and event.agent is None:
                    last_end = event
                for part in guard.feed(event):  # a secret split across text deltas is redacted whole
                    part = emit(part, redacted=part.type in guard.STREAMS)
                    if learns:
                        seen.append(part)
                    yield part
            # No unit left to run (every one was done before): the gates judge the work again.
            outcome = (
                Outcome.from_unit_end(last_end) if last_end else Outcome.of("success", final_text=session.last_text())
            )
            if options.replay is not None:  # lenient mismatches and unreplayed calls are known once the run ends
                for warning in getattr(run.provider, "warnings", None) or []:
                    run.warnings.append(warning)
                    yield emit(ev.Warning_(message=warning, code="replay"))
            if outcome.verdict == "success" and run.plan.gates:
                failures: list[str] = []
                sandbox = run_sandbox(ctx)
                inputs = GateInputs(
                    cwd=options.cwd,
                    goal=_original_goal(run) or run.plan.units[0].goal,
                    final_text=outcome.final_text,
                    messages=session.messages,
                    env=dict(options.env),
                    since=wall_start,
                    sandbox=sandbox,
                    unsandboxed=sandbox.settings.unsandboxed_gates or ("refuse" if options.unattended else "warn"),
                    changes=None if run.resumed else _run_changes(run.features, ctx),
                )
                async for event in run_gates(run.plan.gates, inputs, deps.judge or _judge(run), failures):
                    event = emit(event)
                    if learns:
                        seen.append(event)
                    yield event
                outcome = gated_outcome(outcome, failures)
            if learns and outcome.verdict == "success":
                async for event in run_learning(
                    deps.learning,
                    ctx,
                    events=seen,
                    messages=session.messages,
                    goal=_original_goal(run) or run.plan.units[0].goal,
                    model=run.model,
                    config=run.plan.learning,
                ):
                    yield emit(event)
        except ArreioError as error:  # an expected failure mid-run is a failed run, told by its `done`
            if isinstance(error, Cancelled):
                cancel = error
            else:
                outcome = Outcome(verdict="failed", exit_code=error.exit_code, message=error.message)
        except asyncio.CancelledError as error:
            cancel = error
        except Exception as error:  # noqa: BLE001 - a bug: the stream still ends in `done`, then it goes on
            outcome = Outcome.of("failed", f"internal error: {type(error).__name__}: {error}")
            fault = error
        finally:
            # Runs on success, failure and cancel alike: the report and the session marker always land.
            cut = CUT_SHORT if outcome.verdict == "cancelled" else FAILED_SHORT
            said = outcome.message or outcome.verdict
            # Each call's session (a sub-agent's its own) already holds its `interrupted` result, written
            # by the tool round the cancel cut short. Every unit_start gets its unit_end, a cut-short one too.
            for (kind, agent, key), name in reversed(list(opened.items())):
                if kind == "tool":
                    closing.append(
                        emit(
                            ev.ToolEnd(
                                call_id=key, name=name, is_error=True, status="interrupted", preview=cut, agent=agent
                            )
                        )
                    )
                else:
                    closing.append(
                        emit(
                            ev.UnitEnd(
                                unit_id=key,
                                verdict=outcome.verdict,
                                exit_code=outcome.exit_code,
                                message=said,
                                agent=agent,
                            )
                        )
                    )
            report = _report(
                run, totals, outcome, started=(started_at, t0), events=display_path(events_path, options.cwd)
            )
            report = redactor.model(report)
            for feature in run.features:  # each adds its own section; the next one sees it
                try:  # record keeping never changes the run's verdict
                    section = feature.after_run(ctx, report)
                except Exception as error:  # noqa: BLE001
                    failed = f"{feature.name}: after-run step failed: {type(error).__name__}: {error}"
                    section = Section(warnings=(failed,))
                if section is not None:
                    report = report.with_section(section)
            report_path = run_dir / "report.json"
            write_report(redactor.model(report), report_path, durable=run.settings.fsync)
            session.mark_run(ctx.run_id, "end", iso_ms(clock.now()), verdict=outcome.verdict)
            done = emit(
                ev.Done(
                    verdict=outcome.verdict,
                    exit_code=outcome.exit_code,
                    message=outcome.message,
                    final_text=outcome.final_text,
                    session_id=session.id,
                    report_path=display_path(report_path, options.cwd),
                    steps=totals.steps(),
                    tool_calls=totals.tool_calls,
                    input_tokens=totals.usage.input_tokens,
                    output_tokens=totals.usage.output_tokens,
                    tokens_estimated=totals.usage.estimated,
                    changes=report.changes,
                    cost_usd=report.cost_usd,
                    cache_share=report.cache_share,
                    free=_free(run) is not None,
                    free_because=_free(run),
                    final_json=outcome.final_json,
                )
            )
            session.close()
            if run.lock is not None:
                run.lock.release()
    for event in closing:
        yield event
    yield done
    if cancel is not None:
        raise cancel
    if fault is not None:
        raise fault


def _run_changes(features: list[Feature], ctx: Any) -> Any:
    """The first feature's record of what the run changed (the checkpoints'), or None."""
    return next((changes for feature in features if (changes := feature.run_changes(ctx)) is not None), None)


def _original_goal(run: PreparedRun) -> str:
    """The goal the session works on: this run's, or (continuing) the session's first instruction."""
    if run.goal and run.goal != CONTINUE:
        return run.goal
    return next((m.text for m in run.session.messages if m.role == "user"), run.session.header.title)


def _report(
    run: PreparedRun, totals: Totals, outcome: Outcome, *, started: tuple[Any, float], events: str
) -> RunReport:
    """The output funnel's product, from the run's counters (features add their sections in `after_run`)."""
    started_at, t0 = started
    clock, usage = run.ctx.clock, totals.usage
    return RunReport(
        run_id=run.ctx.run_id,
        session_id=run.session.id,
        model=run.model,
        goal=goal_title(_original_goal(run)),
        verdict=outcome.verdict,
        exit_code=outcome.exit_code,
        message=outcome.message,
        final_text=outcome.final_text,
        started_at=iso_ms(started_at),
        ended_at=iso_ms(clock.now()),
        duration_s=round(clock.monotonic() - t0, 3),
        steps=totals.steps(),
        tool_calls=totals.tool_calls,
        tools_used=dict(totals.tools_used),
        retries=totals.retries,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        tokens_estimated=usage.estimated,
        cache_share=round(cache_share(usage), 4),
        cost_usd=_cost(run, totals),
        warnings=run.warnings,
        events_path=events,
        final_json=outcome.final_json,
        cost_by_model={} if _free(run) else costs_by_model(totals.by_model, run.settings.prices),
        model_switches=list(totals.switches),
    )


def _judge(run: PreparedRun) -> Judge:
    """Validator gates: the offline family scores deterministically; a real model is asked through the
    run's provider factory (so a recording holds the judge's call and a replay serves it)."""
    if registry.is_offline(run.model):
        return OfflineJudge()
    ctx = run.ctx
    return ModelJudge(ctx.provider_factory(run.model, env=ctx.env, base_url=ctx.settings.base_url), run.model)


def _unit_provider(run: PreparedRun, model: str | None, script: Path | None, first_turn: int) -> Provider:
    """A plan unit's own model or script (model None: the run's own provider again), from the run's
    factory (a replay keeps serving from its cassette; a recording keeps recording into it). A
    unit's script starts at the unit's first turn."""
    if model is None:
        return run.provider
    ctx = run.ctx
    extra = {"script_first_turn": first_turn} if script is not None and first_turn else {}
    return ctx.provider_factory(
        model, env=ctx.env, base_url=ctx.settings.base_url, session_id=run.session.id, script=script, **extra
    )


def _free(run: PreparedRun) -> str | None:
    """Why no model bills this run — "offline", "replay", or "local" (a loopback or private-network
    server, the model not priced in config) — or None."""
    if registry.is_offline(run.model):
        return "offline"
    if getattr(run.provider, "name", "") == "replay":
        return "replay"
    where = endpoint_of(run.model, run.ctx.env, run.settings.base_url)
    if is_local(where) and run.model not in run.settings.prices:
        return "local"
    return None


def _cost(run: PreparedRun, totals: Totals) -> float | None:
    """Estimated cost in USD; offline, replayed and local runs are free; None when the price is unknown."""
    if _free(run):
        return 0.0
    return run_cost(run.model, totals.usage, totals.by_model, run.settings.prices)


async def run_to_end(options: RunOptions, deps: PipelineDeps | None = None) -> list[ev.Event]:
    """The non-streaming entry point: drain the same generator."""
    return [event async for event in run_pipeline(options, deps)]


def run_sync(options: RunOptions, deps: PipelineDeps | None = None) -> list[ev.Event]:
    return asyncio.run(run_to_end(options, deps))
