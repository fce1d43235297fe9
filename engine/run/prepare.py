"""The edge of the conveyor (docs/architecture.md section 2): who and what a run is — options and deps, the
goal, the plan, the session (new, or resumed, healed and locked), the run's context (ids, settings,
its one redactor, its one provider factory), the provider, the tools — checked before anything is
created, so a bad input leaves nothing behind."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arreio.engine.core.config import Settings, config_sources, load_settings
from arreio.engine.core.errors import ConfigError, UsageError
from arreio.engine.core.ids import iso_ms, new_id
from arreio.engine.core.paths import display_path, make_state_dir, state_dir
from arreio.engine.core.ports import Clock, Env, Provider, SystemClock, process_env
from arreio.engine.core.prompt import assemble_system
from arreio.engine.features.defaults import engine_features
from arreio.engine.features.resolver import resolve_tools
from arreio.engine.judgement.gates import Judge
from arreio.engine.loop.answer import check_schema, load_schema
from arreio.engine.loop.feature import Feature
from arreio.engine.providers import registry
from arreio.engine.providers.registry import ProviderFactory
from arreio.engine.run.goal import read_goal
from arreio.engine.run.learning import LearningPass
from arreio.engine.run.plan import Plan, PlanProgress, kept_form, load_plan, resumed_plan, single_unit_plan
from arreio.engine.run.provider_source import run_factory
from arreio.engine.run.units import check_units, goal_title
from arreio.engine.session.file import Session, SessionHeader
from arreio.engine.session.format import json_line
from arreio.engine.session.lock import SessionLock
from arreio.engine.session.store import SessionStore
from arreio.engine.tools.registry import ToolRegistry
from arreio.engine.tools.run_context import RunContext
from arreio.engine.walls.redact import Redactor


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
    # --output-schema: the final answer must be JSON valid against this schema (a file, or the schema
    # itself — a batch task may carry it inline); with a plan it is the last unit's (engine/loop/answer.py)
    output_schema: Path | dict[str, Any] | None = None
    fallback_models: list[str] | None = None  # --fallback-model (repeatable): replaces config's fallback_models
    cwd: Path = field(default_factory=Path.cwd)
    env: Env = field(default_factory=process_env)  # the process's, copied when the options are made
    # Nobody watches this run as it happens (a batch attempt): a check that would only warn a person
    # fails closed instead (a command gate with no sandbox to run in).
    unattended: bool = False


@dataclass
class PipelineDeps:
    """What the composition root (`cli/deps.py`) wires in. Defaults are the real thing: the engine's
    own features (governance, tool families, context engineering), the real clock and providers."""

    clock: Clock = field(default_factory=SystemClock)
    provider_factory: ProviderFactory = registry.make_provider
    features: list[Feature] = field(default_factory=engine_features)
    ask_approval: Callable[[Any], bool] | None = None  # an interactive terminal's y/N, when there is one
    learning: LearningPass | None = None  # the `--learn` stage (the learning layer)
    judge: Judge | None = None  # scores `validator` gates; None → the deterministic offline judge


# -- edge ---------------------------------------------------------------------------------------
CONTINUE = (
    "[arreio] The previous run of this session stopped at a ceiling before the work was done. Tools are "
    "available again: continue where you left off, and finish the goal."
)


def _continuation(session: Session) -> str | None:
    """What a resume without a new goal sends: nothing when the history is unfinished (the loop just
    goes on), a continuation note after a run that stopped at a ceiling; else a UsageError."""
    if not session.messages:
        raise UsageError(f"session {session.id} has no messages to continue; give it a goal (text or --goal FILE)")
    last = session.messages[-1]
    if last.role == "assistant" and not last.tool_calls:
        ended = [r for r in session.runs if r.get("event") == "end"]
        if ended and ended[-1].get("verdict") == "partial":
            return CONTINUE
        raise UsageError(
            f"session {session.id} already ended with an answer; give it a new instruction (as text, or --goal FILE)"
        )
    return None


def _stored_plan(session: Session, redactor: Redactor, warnings: list[str]) -> Plan | None:
    """The plan a session was started with (`--plan`), as it kept it, so a resume finishes it."""
    stored = session.header.plan
    if not stored:
        return None

    def redacted(form: dict[str, Any]) -> dict[str, Any]:
        return json.loads(redactor.bytes(json_line(form)))  # as the header line stored it

    try:
        plan, said = resumed_plan(stored, session.header.plan_spec, redacted)
    except UsageError as error:
        raise UsageError(f"session {session.id}: {error.message}") from None
    warnings += [said] if said else []
    return plan


def _check_state_dir(options: RunOptions) -> None:
    """The state folder must be a folder we can write, or the run fails before anything is made."""
    home = state_dir(options.cwd, options.env)
    shown = display_path(home, options.cwd)
    if home.exists() and not home.is_dir():
        raise UsageError(
            f"{shown} is a file, but arreio keeps its state in a folder there (move it or set ARREIO_HOME)"
        )
    existing = home
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(
            f"cannot create the state folder {shown}: {existing} is not a writable folder (set ARREIO_HOME)"
        )


def _check_record(options: RunOptions) -> None:
    if options.record is None:
        return
    path = options.record if options.record.is_absolute() else options.cwd / options.record
    if path.is_dir():
        raise UsageError(f"--record {options.record} is a folder; give a file name (e.g. run.cassette.jsonl)")
    if path.parent.exists() and not path.parent.is_dir():
        raise UsageError(f"--record {options.record}: {path.parent} is not a folder")
    if options.replay is not None and _same_file(path, options.cwd / options.replay):
        # the recording would replace the cassette the replay is still reading (a failed replay left
        # a one-call cassette where a paid recording had been)
        raise UsageError(f"--record {options.record} is the cassette --replay reads; record to another file")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and os.path.samefile(a, b))
    except OSError:
        return False


def _stored_script(session: Session, options: RunOptions) -> Path | None:
    """A session started from `--script` resumes with the same script unless told otherwise: a model
    named on this run (`--offline` too) is that model, not the script again."""
    stored = session.header.script
    if options.script is not None or not stored or options.model is not None:
        return options.script
    path = Path(stored)
    if not path.is_file():
        raise UsageError(f"session {session.id} was run with --script {stored}, which no longer exists; pass --script")
    return path


@dataclass
class PreparedRun:
    ctx: RunContext  # complete: ids, settings, the run's redactor and provider factory
    session: Session
    model: str
    provider: Provider
    goal: str | None
    resumed: bool
    warnings: list[str]
    plan: Plan
    lock: SessionLock | None = None
    resume_only: bool = False  # continue the history without a new message
    tools: ToolRegistry | None = None  # resolved once while assembling a new session's prompt
    progress: PlanProgress = field(default_factory=lambda: PlanProgress())  # units started/done before
    script: Path | None = None  # the run's `--script` (or the one the session was started with)
    learn: bool = False  # the session was started with `--learn`: its resumes learn too
    output_schema: dict[str, Any] | None = None  # `--output-schema`, read and checked
    model_chosen: str | None = None  # why arreio chose the model (none was configured), else None
    features: list[Feature] = field(default_factory=list)  # this run's objects (`Feature.start`), in deps' order

    @property
    def settings(self) -> Settings:
        return self.ctx.settings


def prepare(options: RunOptions, deps: PipelineDeps) -> PreparedRun:
    """Who and what: settings, goal, plan, session (new, or resumed and healed, under its lock),
    provider. A failure here releases the lock it took."""
    locks: list[SessionLock] = []
    try:
        return _assemble(options, deps, locks)
    except BaseException:
        for held in locks:
            held.release()
        raise


def _assemble(options: RunOptions, deps: PipelineDeps, locks: list[SessionLock]) -> PreparedRun:
    flags: dict[str, Any] = {
        "model": options.model,
        "max_steps": options.max_steps,
        "fallback_models": options.fallback_models,
    }
    if options.script is not None and options.model is None:
        flags["model"] = registry.OFFLINE
    settings = load_settings(options.cwd, options.env, flags)
    for fallback in settings.fallback_models:  # a typo in the chain fails now, not when the model breaks
        try:
            registry.check_model(fallback)
        except ConfigError as error:
            raise ConfigError(f"fallback model: {error.message}") from None
    goal = read_goal(options)
    output_schema = _output_schema(options)
    _check_state_dir(options)
    _check_record(options)
    now = deps.clock.now()
    store = SessionStore(state_dir(options.cwd, options.env) / "sessions")
    session_id = store.resolve(options.resume) if options.resume else new_id(now)
    redactor = Redactor.from_env(options.env)  # the run's one redactor: every writer uses it
    factory, replay = run_factory(options, deps, redactor, settings)
    ctx = RunContext(
        cwd=options.cwd,
        settings=settings,
        clock=deps.clock,
        env=options.env,
        redactor=redactor,
        provider_factory=factory,
        session_id=session_id,
        session_path=store.directory / f"{session_id}.jsonl",
        run_id=new_id(now, "run-"),
        approve_all=options.yes,
        ask=deps.ask_approval,
    )
    for feature in deps.features:  # each feature's own config section: bad values fail before a session exists
        try:
            feature.check(ctx)
        except ConfigError as error:
            raise ConfigError(f"{error.message} (in {config_sources(options.cwd, options.env)})") from None
    features = [feature.start(ctx) for feature in deps.features]  # this run's own objects
    plan: Plan | None = None
    progress = PlanProgress()
    if options.plan is not None:
        if options.resume:
            raise UsageError("--plan starts a new run; a resumed plan session goes on with its own plan")
        plan_path = options.plan if options.plan.is_absolute() else options.cwd / options.plan
        plan = load_plan(plan_path)
    warnings: list[str] = []
    model_chosen: str | None = None
    script = options.script
    lock: SessionLock | None = None
    session: Session | None = None
    if options.resume:
        path = store.path_for(session_id)
        lock = SessionLock(path).acquire(session_id)  # before the loader may rewrite the file
        locks.append(lock)
        session, repairs = Session.open(path, repair=True, redactor=ctx.redactor)
        if parent := session.header.parent:
            raise UsageError(
                f"{session_id} is a sub-agent's session, which ended with its task; "
                f"resume its parent session {parent} instead"
            )
        warnings += [f"session repaired on load: {r.kind} — {r.detail}" for r in repairs]
        script = _stored_script(session, options)
        model = options.model or ("offline" if script else session.header.model)
        plan = _stored_plan(session, ctx.redactor, warnings)
        progress = PlanProgress.of(session)
        if goal is None and not (plan and (progress.next_is_new(plan) or progress.all_done(plan))):
            goal = _continuation(session)
    else:
        if goal is None and plan is None:
            raise UsageError("no goal given: pass --goal FILE (or --resume ID to continue a session)")
        model, model_chosen = (
            (settings.model, None) if options.unattended else registry.model_for(settings, options.env)
        )
    if replay is not None:
        model = options.model or replay.recorded_model
    else:
        registry.check_model(model)
    provider = ctx.provider_factory(
        model, env=options.env, base_url=settings.base_url, session_id=session_id, script=script
    )
    tools: ToolRegistry | None = None
    if session is None:
        title_text = goal or (plan.units[0].goal if plan else "")
        tools = resolve_run_tools(ctx, features, options)
        if plan is not None and plan.from_file:  # a plan that cannot run makes no session
            check_units(plan, plan.ordered(), tools, Path(plan.source).parent)
        session = _new_session(options, deps, features, ctx, tools, model, title_text, plan)
        lock = SessionLock(session.path).acquire(session.id)
        locks.append(lock)
    output_schema = _kept_schema(session, output_schema)
    plan = plan or single_unit_plan(goal or "")
    resumed_only = bool(options.resume) and goal is None
    return PreparedRun(
        ctx,
        session,
        model,
        provider,
        goal,
        bool(options.resume),
        warnings,
        plan,
        lock,
        resumed_only,
        tools,
        progress,
        script,
        session.header.learn,
        output_schema,
        model_chosen,
        features,
    )


OUTPUT_SCHEMA_RECORD = "output_schema"  # the session record keeping a run's `--output-schema`


def _kept_schema(session: Session, given: dict[str, Any] | None) -> dict[str, Any] | None:
    """The schema is kept with the session (a record), so a resume or `arreio approve` goes on checking
    the answer against it; a schema given again replaces it for this run and the ones after."""
    stored = next((r.get("schema") for r in reversed(session.extra) if r.get("type") == OUTPUT_SCHEMA_RECORD), None)
    if given is None:
        return stored if isinstance(stored, dict) else None
    if given != stored:
        session.append_record({"type": OUTPUT_SCHEMA_RECORD, "schema": given})
    return given


def _output_schema(options: RunOptions) -> dict[str, Any] | None:
    """`--output-schema`, read and checked before anything is created (a bad one: exit 2)."""
    given = options.output_schema
    if given is None or isinstance(given, dict):
        return None if given is None else check_schema(given, "output schema")
    path = given if given.is_absolute() else options.cwd / given
    return load_schema(path, shown=str(given))


def _new_session(
    options: RunOptions,
    deps: PipelineDeps,
    features: list[Feature],
    ctx: RunContext,
    tools: ToolRegistry,
    model: str,
    goal: str,
    plan: Plan | None,
) -> Session:
    now = deps.clock.now()
    sources = [block for feature in features for block in feature.prompt_blocks(ctx)]
    system = assemble_system(cwd=options.cwd, now=now, sources=sources, tool_names=tools.names())
    header = SessionHeader(
        id=ctx.session_id,
        created_at=iso_ms(now),
        cwd=str(options.cwd),
        model=model,
        title=goal_title(goal),
        system=system,
        # so `--resume` and `arreio approve` go on with the same script and plan, and still learn
        script=str((options.cwd / options.script).resolve()) if options.script is not None else None,
        learn=options.learn,
        plan=str((options.cwd / options.plan).resolve()) if options.plan is not None else None,
        plan_spec=kept_form(plan) if plan is not None and options.plan is not None else None,  # resumes obey this copy
        # a block read from project instruction files names them (memory/instructions_feature.py)
        instructions=[name for source in sources for name in getattr(source, "instruction_files", ())],
    )
    home = state_dir(options.cwd, options.env)
    make_state_dir(home)  # the run's first write: a folder made now keeps itself out of git
    return Session.create(home / "sessions", header, redactor=ctx.redactor, durable=ctx.settings.fsync)


# -- orchestrator -------------------------------------------------------------------------------
def resolve_run_tools(ctx: RunContext, features: list[Feature], options: RunOptions) -> ToolRegistry:
    """The tools this run offers, from its started features (`PreparedRun.features`)."""
    settings = ctx.settings
    enable = options.tools if options.tools is not None else settings.tools_enabled
    return resolve_tools(
        ctx,
        features,
        enable=enable,
        disable=[*settings.tools_disabled, *options.no_tools],
        flagged=[*(options.tools or []), *options.no_tools],
    )
