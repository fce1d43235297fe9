"""The one conveyor every run goes through (DESIGN.md section 2).

    edge → orchestrator → assembly → execution → output funnel

`run_pipeline` is an async generator of events; `run_to_end` drains it. Entry points (the CLI's `run`,
`--resume`, tests, later approvals and schedules) only build `RunOptions` and `PipelineDeps`.
Later stages (plan units, gates, learning, governance) plug in here, once, for all of them.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arreio.engine import events as ev
from arreio.engine.config import Settings, load_settings
from arreio.engine.context import assemble_system
from arreio.engine.errors import UsageError
from arreio.engine.feature import Feature, RunContext
from arreio.engine.gates import GateInputs, Judge, ModelJudge, OfflineJudge
from arreio.engine.governance.redact import DeltaGuard, Redactor
from arreio.engine.ids import iso_ms, new_id
from arreio.engine.paths import display_path, state_dir
from arreio.engine.plan import Plan, load_plan, single_unit_plan
from arreio.engine.ports import Clock, Provider, SystemClock
from arreio.engine.pricing import cache_share, estimate_cost
from arreio.engine.providers import registry
from arreio.engine.report import RunReport, write_report
from arreio.engine.runner import Outcome, Runner
from arreio.engine.session import Session, SessionHeader, SessionStore
from arreio.engine.session_lock import SessionLock
from arreio.engine.stages import LearningPass, UnitRunner, gated_outcome, goal_title, run_gates, run_learning
from arreio.engine.tools.base import ToolContext
from arreio.engine.tools.registry import ToolRegistry
from arreio.engine.tools.resolver import resolve_tools


@dataclass
class RunOptions:
    """What the user asked for. `None` means "not given" (config or the session decides)."""

    goal_path: Path | None = None
    goal_text: str | None = None
    model: str | None = None
    script: Path | None = None
    resume: str | None = None
    max_steps: int | None = None
    yes: bool = False
    tools: list[str] | None = None  # --tools: offer only these
    no_tools: list[str] = field(default_factory=list)  # --no-tools: never offer these
    record: Path | None = None  # --record: write every model call to a cassette
    replay: Path | None = None  # --replay: serve model calls from a cassette (offline family)
    replay_mode: str = "strict"  # strict: a changed request fails the run; lenient: a warning
    plan: Path | None = None  # --plan: units in dependency order, then gates
    learn: bool = False  # --learn: the gated learning pass after the gates pass
    cwd: Path = field(default_factory=Path.cwd)
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))


ProviderFactory = Callable[..., Provider]


@dataclass
class PipelineDeps:
    """What the composition root (`cli/deps.py`) wires in. Defaults are the real thing."""

    clock: Clock = field(default_factory=SystemClock)
    provider_factory: ProviderFactory = registry.make_provider
    features: list[Feature] = field(default_factory=list)
    ask_approval: Callable[[Any], bool] | None = None  # an interactive terminal's y/N, when there is one
    learning: LearningPass | None = None  # the `--learn` stage (the learning layer)
    judge: Judge | None = None  # scores `validator` gates; None → the deterministic offline judge


# -- edge ---------------------------------------------------------------------------------------
def read_goal(options: RunOptions) -> str | None:
    if options.goal_text is not None:
        text = options.goal_text
    elif options.goal_path is not None:
        path = options.goal_path if options.goal_path.is_absolute() else options.cwd / options.goal_path
        if not path.exists():
            raise UsageError(f"goal file not found: {options.goal_path}")
        if path.is_dir():
            raise UsageError(f"goal path is a folder, not a file: {options.goal_path}")
        try:
            text = path.read_text(encoding="utf-8-sig")  # a BOM some editors add is not part of the goal
        except UnicodeDecodeError:
            raise UsageError(f"goal file is not UTF-8 text: {options.goal_path}") from None
        except OSError as exc:
            raise UsageError(f"cannot read goal file {options.goal_path}: {exc.strerror}") from None
    else:
        return None
    if not text.strip():
        raise UsageError(f"goal is empty: {options.goal_path or 'text'}")
    return text


CONTINUE = (
    "[arreio] The previous run of this session stopped at a ceiling before the work was done. Tools are "
    "available again: continue where you left off, and finish the goal."
)


def _continuation(session: Session) -> str | None:
    """What a resume without a new goal sends: nothing when the history is unfinished (the loop just
    goes on), a continuation note after a run that stopped at a ceiling; else a UsageError."""
    if not session.messages:
        raise UsageError(f"session {session.id} has no messages to continue; pass --goal")
    last = session.messages[-1]
    if last.role == "assistant" and not last.tool_calls:
        ended = [r for r in session.runs if r.get("event") == "end"]
        if ended and ended[-1].get("verdict") == "partial":
            return CONTINUE
        raise UsageError(f"session {session.id} already ended with an answer; pass --goal to give it a new instruction")
    return None


def _check_state_dir(options: RunOptions) -> None:
    """The state folder must be a folder we can write, or the run fails before anything is made."""
    home = state_dir(options.cwd, options.env)
    shown = display_path(home, options.cwd)
    if home.exists() and not home.is_dir():
        raise UsageError(f"{shown} is a file, but arreio keeps its state in a folder there (move it or set ARREIO_HOME)")
    existing = home
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"cannot create the state folder {shown}: {existing} is not a writable folder (set ARREIO_HOME)")


def _check_record(options: RunOptions) -> None:
    if options.record is None:
        return
    path = options.record if options.record.is_absolute() else options.cwd / options.record
    if path.is_dir():
        raise UsageError(f"--record {options.record} is a folder; give a file name (e.g. run.cassette.jsonl)")
    if path.parent.exists() and not path.parent.is_dir():
        raise UsageError(f"--record {options.record}: {path.parent} is not a folder")


def _stored_script(session: Session, options: RunOptions) -> Path | None:
    """A session started from `--script` resumes with the same script unless told otherwise."""
    stored = getattr(session.header, "script", None)
    if options.script is not None or not stored or options.model not in (None, registry.OFFLINE):
        return options.script
    path = Path(stored)
    if not path.is_file():
        raise UsageError(f"session {session.id} was run with --script {stored}, which no longer exists; pass --script")
    return path


@dataclass
class _Run:
    settings: Settings
    session: Session
    model: str
    provider: Provider
    goal: str | None
    resumed: bool
    warnings: list[str]
    plan: Plan
    lock: SessionLock | None = None
    resume_only: bool = False  # continue the history without a new message


def _edge(options: RunOptions, deps: PipelineDeps) -> _Run:
    """Who and what: settings, goal, plan, session (new, or resumed and healed, under its lock),
    provider. A failure here releases the lock it took."""
    locks: list[SessionLock] = []
    try:
        return _assemble(options, deps, locks)
    except BaseException:
        for held in locks:
            held.release()
        raise


def _assemble(options: RunOptions, deps: PipelineDeps, locks: list[SessionLock]) -> _Run:
    flags: dict[str, Any] = {"model": options.model, "max_steps": options.max_steps}
    if options.script is not None and options.model is None:
        flags["model"] = registry.OFFLINE
    settings = load_settings(options.cwd, options.env, flags)
    goal = read_goal(options)
    _check_state_dir(options)
    _check_record(options)
    for feature in deps.features:  # each feature's own config section: bad values fail before a session exists
        feature.check(settings)
    plan: Plan | None = None
    if options.plan is not None:
        if options.resume:
            raise UsageError("--plan starts a new run; it cannot be combined with --resume")
        plan_path = options.plan if options.plan.is_absolute() else options.cwd / options.plan
        plan = load_plan(plan_path)
    store = SessionStore(state_dir(options.cwd, options.env) / "sessions")
    warnings: list[str] = []
    script = options.script
    lock: SessionLock | None = None
    if options.resume:
        session_id = store.resolve(options.resume)
        path = store.path_for(session_id)
        lock = SessionLock(path).acquire(session_id)  # before the loader may rewrite the file
        locks.append(lock)
        session, repairs = Session.open(path, repair=True)
        warnings += [f"session repaired on load: {r.kind} — {r.detail}" for r in repairs]
        script = _stored_script(session, options)
        model = options.model or ("offline" if script else session.header.model)
        if goal is None:
            goal = _continuation(session)
    else:
        if goal is None and plan is None:
            raise UsageError("no goal given: pass --goal FILE (or --resume ID to continue a session)")
        model = settings.model
        session = None  # type: ignore[assignment]
    if options.replay is not None:
        from arreio.engine.providers.replay import ReplayProvider

        provider: Provider = ReplayProvider(options.replay, strict=options.replay_mode == "strict", env=options.env)
        model = options.model or provider.recorded_model  # type: ignore[attr-defined]
    else:
        registry.check_model(model)
        provider = deps.provider_factory(
            model, env=options.env, base_url=settings.base_url, session_id=session.id if session else None,
            script=script,
        )
    if options.record is not None:
        from arreio.engine.providers.recorder import RecordingProvider

        provider = RecordingProvider(provider, options.record, model=model, env=options.env)
    if session is None:
        title_text = goal or (plan.units[0].goal if plan else "")
        session = _new_session(options, deps, settings, model, title_text)
        lock = SessionLock(session.path).acquire(session.id)
        locks.append(lock)
    plan = plan or single_unit_plan(goal or "")
    resumed_only = bool(options.resume) and goal is None
    return _Run(settings, session, model, provider, goal, bool(options.resume), warnings, plan, lock, resumed_only)


def _new_session(options: RunOptions, deps: PipelineDeps, settings: Settings, model: str, goal: str) -> Session:
    now = deps.clock.now()
    ctx = _context(options, deps, settings)
    tools = _tools(ctx, deps, options)
    sources = [block for feature in deps.features for block in feature.prompt_blocks(ctx)]
    system = assemble_system(cwd=options.cwd, now=now, sources=sources, tool_names=tools.names())
    header = SessionHeader(
        id=new_id(now), created_at=iso_ms(now), cwd=str(options.cwd), model=model, title=goal_title(goal), system=system
    )
    if options.script is not None:  # so `--resume` and `arreio approve` go on with the same script
        header.script = str((options.cwd / options.script).resolve())  # type: ignore[attr-defined]
    return Session.create(state_dir(options.cwd, options.env) / "sessions", header)


# -- orchestrator -------------------------------------------------------------------------------
def _context(options: RunOptions, deps: PipelineDeps, settings: Settings) -> RunContext:
    return RunContext(
        cwd=options.cwd, state_dir=state_dir(options.cwd, options.env), settings=settings, clock=deps.clock,
        env=options.env, approve_all=options.yes, ask=deps.ask_approval,
    )


def _tools(ctx: RunContext, deps: PipelineDeps, options: RunOptions) -> ToolRegistry:
    settings = ctx.settings
    enable = options.tools if options.tools is not None else settings.tools_enabled
    return resolve_tools(ctx, deps.features, enable=enable, disable=[*settings.tools_disabled, *options.no_tools])


# -- the conveyor -------------------------------------------------------------------------------
async def run_pipeline(options: RunOptions, deps: PipelineDeps | None = None) -> AsyncIterator[ev.Event]:
    """Run one goal end to end, yielding every event; the last one is always `done`."""
    deps = deps or PipelineDeps()
    clock = deps.clock
    run = _edge(options, deps)
    started_at, t0 = clock.now(), clock.monotonic()
    wall_start = time.time() - 1  # file times are wall-clock (and coarse on some filesystems)
    run_id = new_id(started_at, "run-")
    run_dir = state_dir(options.cwd, options.env) / "runs" / run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    events_path = run_dir / "events.jsonl"
    session = run.session
    session.durable = run.settings.fsync
    redactor = Redactor.from_env(options.env)  # secrets never reach the session, events or report
    session.redactor, guard = redactor, DeltaGuard(redactor)
    fctx = _context(options, deps, run.settings)
    fctx.session_id, fctx.session_path, fctx.run_id = session.id, session.path, run_id
    tools = _tools(fctx, deps, options)
    ctx = ToolContext(
        root=options.cwd.resolve(), env=dict(options.env), clock=clock, session_id=session.id, run_id=run_id,
        settings=run.settings.tools.model_dump(),
    )
    runner = Runner(
        provider=run.provider, model=run.model, session=session, tools=tools, tool_ctx=ctx,
        system=session.header.system, settings=run.settings, clock=clock,
        hooks=[hook for feature in deps.features for hook in feature.hooks(fctx)],
    )
    outcome = Outcome("cancelled", 130, "cancelled", "")
    seen: list[Any] = []  # the run's events, for the learning pass
    with open(events_path, "w", encoding="utf-8") as sink:

        open_calls: dict[str, str] = {}  # tool_start without tool_end yet (a cancel closes them below)

        def emit(event: Any) -> Any:
            event = redactor.model(event)
            if event.type == "tool_start" and event.agent is None:
                open_calls[event.call_id] = event.name
            elif event.type == "tool_end" and event.agent is None:
                open_calls.pop(event.call_id, None)
            sink.write(ev.event_to_json(event) + "\n")
            for feature in deps.features:
                feature.on_event(fctx, event)
            return event

        session.mark_run(run_id, "start", iso_ms(started_at))
        try:
            yield emit(ev.RunStart(run_id=run_id, session_id=session.id, model=run.model, cwd=str(options.cwd), resumed=run.resumed))
            for warning in run.warnings:
                yield emit(ev.Warning_(message=warning, code="session_repaired"))
            units = UnitRunner(
                plan=run.plan, runner=runner, tools=tools, goal=run.goal, resume_only=run.resume_only,
                make_provider=lambda model, script: _unit_provider(options, deps, run, model, script),
                default_model=run.model, plan_dir=Path(run.plan.source).parent if options.plan else options.cwd,
            )
            async for event in units.run():
                for part in guard.feed(event):  # a secret split across text deltas is redacted whole
                    seen.append(emit(part))
                    yield seen[-1]
            outcome = runner.outcome
            if options.replay is not None:  # lenient mismatches and unreplayed calls are known once the run ends
                for warning in getattr(run.provider, "warnings", None) or []:
                    run.warnings.append(warning)
                    yield emit(ev.Warning_(message=warning, code="replay"))
            if outcome.verdict == "success" and run.plan.gates:
                failures: list[str] = []
                inputs = GateInputs(cwd=options.cwd, goal=_original_goal(run) or run.plan.units[0].goal,
                                    final_text=outcome.final_text, messages=session.messages, env=dict(options.env),
                                    since=wall_start)
                async for event in run_gates(run.plan, inputs, deps.judge or _judge(run), failures):
                    seen.append(emit(event))
                    yield seen[-1]
                outcome = gated_outcome(outcome, failures)
            if options.learn and outcome.verdict == "success":
                async for event in run_learning(
                    deps.learning, fctx, events=seen, messages=session.messages,
                    goal=_original_goal(run) or run.plan.units[0].goal, model=run.model, config=run.plan.learning,
                ):
                    yield emit(event)
        finally:
            # Runs on success, failure and cancel alike: the report and the session marker always land.
            for call_id, name in list(open_calls.items()):  # the session got `interrupted` results for these
                emit(ev.ToolEnd(call_id=call_id, name=name, is_error=True, status="interrupted",
                                preview="interrupted: the run was cancelled before the call finished"))
            report = _report(run, runner, outcome, run_id=run_id, started=(started_at, t0), clock=clock,
                             events=display_path(events_path, options.cwd))
            report = redactor.model(report)
            report_path = run_dir / "report.json"
            for feature in deps.features:
                try:  # record keeping never changes the run's verdict
                    feature.after_run(fctx, report)
                except Exception as error:  # noqa: BLE001
                    report.warnings.append(f"{feature.name}: after-run step failed: {type(error).__name__}: {error}")
            write_report(report, report_path)
            session.mark_run(run_id, "end", iso_ms(clock.now()), verdict=outcome.verdict)
            done = ev.Done(
                verdict=outcome.verdict, exit_code=outcome.exit_code, message=outcome.message,
                final_text=outcome.final_text, report_path=display_path(report_path, options.cwd),
                steps=runner.steps, tool_calls=runner.tool_calls,
                input_tokens=runner.usage.input_tokens, output_tokens=runner.usage.output_tokens,
            )
            done = emit(done)
            session.close()
            if run.lock is not None:
                run.lock.release()
    yield done


def _original_goal(run: _Run) -> str:
    """The goal the session works on: this run's, or (continuing) the session's first instruction."""
    if run.goal and run.goal != CONTINUE:
        return run.goal
    return next((m.text for m in run.session.messages if m.role == "user"), run.session.header.title)


def _report(run: _Run, runner: Runner, outcome: Outcome, *, run_id: str, started: tuple[Any, float], clock: Clock,
            events: str) -> RunReport:
    """The output funnel's product, from the run's counters (features add their fields in `after_run`)."""
    started_at, t0 = started
    usage = runner.usage
    return RunReport(
        run_id=run_id, session_id=run.session.id, model=run.model,
        goal=goal_title(_original_goal(run)), verdict=outcome.verdict, exit_code=outcome.exit_code,
        message=outcome.message, final_text=outcome.final_text, started_at=iso_ms(started_at),
        ended_at=iso_ms(clock.now()), duration_s=round(clock.monotonic() - t0, 3), steps=runner.steps,
        tool_calls=runner.tool_calls, tools_used=dict(runner.tools_used), retries=runner.retries,
        input_tokens=usage.input_tokens, output_tokens=usage.output_tokens, cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens, cache_share=round(cache_share(usage), 4),
        cost_usd=_cost(run, runner), warnings=run.warnings, events_path=events,
    )


def _judge(run: _Run) -> Judge:
    """Validator gates: the offline family scores deterministically; a real model is asked through the
    run's own provider (so a recording holds the judge's call and a replay serves it)."""
    if registry.is_offline(run.model):
        return OfflineJudge()
    return ModelJudge(run.provider, run.model)


def _unit_provider(options: RunOptions, deps: PipelineDeps, run: _Run, model: str, script: Path | None) -> Provider:
    """A plan unit's own model or script. A replay keeps serving from its cassette; a recording keeps
    recording (into the same cassette) whatever provider the unit uses."""
    if options.replay is not None:
        return run.provider
    fresh = deps.provider_factory(model, env=options.env, base_url=run.settings.base_url,
                                  session_id=run.session.id, script=script)
    if options.record is not None and hasattr(run.provider, "writer"):
        run.provider.inner = fresh  # type: ignore[attr-defined]
        return run.provider
    return fresh


def _cost(run: _Run, runner: Runner) -> float | None:
    """Estimated cost in USD; offline runs and replays are free; None when the price is unknown."""
    if registry.is_offline(run.model) or getattr(run.provider, "name", "") == "replay":
        return 0.0
    return estimate_cost(run.model, runner.usage)


async def run_to_end(options: RunOptions, deps: PipelineDeps | None = None) -> list[ev.Event]:
    """The non-streaming entry point: drain the same generator."""
    return [event async for event in run_pipeline(options, deps)]


def run_sync(options: RunOptions, deps: PipelineDeps | None = None) -> list[ev.Event]:
    return asyncio.run(run_to_end(options, deps))
