"""`CheckpointFeature`: the working tree is checkpointed before every tool round that may change it
and again after, and the change is recorded against the run, the step and the calls that made it.

A round of read-only calls (`plan.READ_ONLY_TOOLS`, or a tool of arreio's own that declares
`read_only`) costs nothing: the store is not even opened. A tool that runs elsewhere (`Tool.remote`:
an MCP server) is checkpointed whatever it says of itself — `readOnlyHint` is a claim, not a fact. A
sub-agent's calls run inside its parent's `delegate` call, so the parent's round covers them. The run's
net change lands in the report (`changes`, `checkpoint_before`, `checkpoint_skipped`) and the pipeline
copies it onto `done`. A checkpoint that cannot be taken (no git, a full disk) is a warning, never a
failed run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arreio.engine.checkpoints.evidence import CheckpointChanges
from arreio.engine.checkpoints.history import prune
from arreio.engine.checkpoints.index import CheckpointIndex
from arreio.engine.checkpoints.plan import empty_changes, may_change, relevant_skipped, shown, shown_changes
from arreio.engine.checkpoints.recorder import Checkpoint, Recorder
from arreio.engine.checkpoints.settings import CheckpointSettings, checkpoint_settings
from arreio.engine.checkpoints.store import IGNORED_WHY, CheckpointError, ShadowRepo, find_git
from arreio.engine.core import events as ev
from arreio.engine.core.paths import resolve_below
from arreio.engine.core.programs import agent_writable
from arreio.engine.core.wording import UNDO_LEAVES
from arreio.engine.loop.feature import Feature
from arreio.engine.loop.hooks import RunHook, Turn
from arreio.engine.loop.report import CheckpointSection, unsaid
from arreio.engine.tools.run_context import RunContext
from arreio.engine.walls.settings import governance_settings

if TYPE_CHECKING:
    from arreio.engine.core.messages import ToolCallPart
    from arreio.engine.loop.report import RunReport
    from arreio.engine.tools.base import ToolResult

GIT_MISSING = (
    "checkpoints are off for this run: git is not installed (or not on PATH), so changes cannot "
    "be undone with `arreio undo`; install git, or set `checkpoints: {enabled: false}` to silence this"
)


def _listed(paths: list[str], why: dict[str, Any]) -> str:
    listed = ", ".join(f"{shown(p)} ({why[p][2]})" for p in paths[:5])
    return listed + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")


@dataclass
class _Round:
    step: int
    before: Checkpoint
    calls: list[dict[str, str]] = field(default_factory=list)
    expected: set[str] = field(default_factory=set)  # ids of this round's calls that may change files


class _RunCheckpoints:
    """One run's checkpoints. The store is opened lazily, at the first round that may change files."""

    def __init__(
        self, ctx: RunContext, settings: CheckpointSettings, git: str | None, untrusted: list[Path] | None = None
    ) -> None:
        self.ctx, self.settings, self.git = ctx, settings, git
        self.untrusted = untrusted or []
        self.recorder: Recorder | None = None
        self.open: _Round | None = None
        self.off = git is None
        self.events: list[ev.Event] = []
        self.warnings: list[str] = []
        self.announced_skips: set[str] = set()
        self.noted_ignored = False  # a gitignored file the run made (undo leaves it) is said once a run
        # The files this run's file tools write, relative to the working tree: one that .gitignore
        # keeps out of the checkpoints (`.env`, `build/…`) is said, not silently left out of undo.
        self.written: set[str] = set()
        self.existed: set[str] = set()  # those of them that were there before the run's call wrote them
        self.write_tools = frozenset(governance_settings(ctx.settings).write_tools)
        if git is None:
            self._warn(GIT_MISSING)

    def _warn(self, message: str) -> None:
        self._say(message, code="checkpoints")

    def _say(self, message: str, *, code: str) -> None:
        self.warnings.append(message)
        self.events.append(ev.Warning_(message=message, code=code))

    def drain(self) -> list[ev.Event]:
        out, self.events = self.events, []
        return out

    def _recorder(self) -> Recorder:
        if self.recorder is None:
            assert self.git is not None and self.ctx.state_dir is not None
            durable = self.ctx.settings.fsync
            repo = ShadowRepo(
                self.ctx.state_dir,
                self.ctx.cwd,
                git=self.git,
                max_file_bytes=self.settings.max_file_bytes,
                path_env=self.ctx.env.get("PATH"),
                durable=durable,
                untrusted=self.untrusted,
            )
            index = CheckpointIndex(self.ctx.state_dir, durable=durable, redactor=self.ctx.redactor)
            self.recorder = Recorder(
                repo, index, self.ctx.clock, run_id=self.ctx.run_id, session_id=self.ctx.session_id
            )
        return self.recorder

    def _take(self, phase: str, step: int, **extra: Any) -> Checkpoint | None:
        if self.off:
            return None
        try:
            return self._recorder().checkpoint(phase, step=step, watch=sorted(self.written), **extra)
        except Exception as error:  # noqa: BLE001 — a checkpoint never fails the run; it says so, once
            self.off = True  # said once; the run goes on without checkpoints
            self._warn(f"checkpoints are off for the rest of this run: {error}; changes from here on cannot be undone")
            return None

    # -- the round ------------------------------------------------------------------------------------
    def _watch(self, call: ToolCallPart) -> None:
        path = call.arguments.get("path") if call.name in self.write_tools else None
        if not isinstance(path, str) or not path.strip():
            return
        try:
            target = resolve_below(self.ctx.cwd.resolve(), path)
            rel = target.relative_to(self.ctx.cwd.resolve())
        except (OSError, RuntimeError, ValueError):
            return  # outside the working tree: the file tools refuse it anyway
        if any(part.casefold() in (".git", ".arreio") for part in rel.parts):
            return  # never written by the agent (refused) and never checkpointed: not "ignored by .gitignore"
        if rel.as_posix() not in self.written and os.path.lexists(target):
            self.existed.add(rel.as_posix())  # seen before the call runs: the user's (or an earlier round's)
        self.written.add(rel.as_posix())

    def before_call(self, step: int, call: ToolCallPart) -> None:
        self._watch(call)
        if self.open is not None and self.open.step != step:
            self.close_round()  # a round that ended without its hook (a resumed approval's round)
        if self.open is None:
            point = self._take("before", step)
            if point is None:
                return
            self.open = _Round(step, point)
        self.open.expected.add(call.id)

    def ran(self, call: ToolCallPart) -> None:
        if self.open is not None and call.id in self.open.expected:
            self.open.calls.append({"id": call.id, "name": call.name})

    def close_round(self) -> None:
        round_, self.open = self.open, None
        if round_ is None:
            return
        point = self._take("after", round_.step, calls=round_.calls, before=round_.before)
        if point is not None:
            self._announce(point)

    def _announce(self, point: Checkpoint) -> None:
        """A file left out of the checkpoints (gitignored, too big, unreadable) that the run touched is
        said, not only listed in the report. One that existed before the run and was changed is a
        warning at once: what the user had cannot be restored. One the run made is a note: nothing the
        user had is at stake, only that undo leaves it (a first quickstart writes into `build/`, and a
        warning there read as if something went wrong); gitignored ones are noted once a run."""
        first = self.recorder.first.skipped if self.recorder and self.recorder.first else {}
        fresh = [p for p in relevant_skipped(first, point.skipped) if p not in self.announced_skips]
        if not fresh:
            return
        self.announced_skips.update(fresh)
        why = {**first, **point.skipped}
        had = [p for p in fresh if p in first or p in self.existed]
        made = [p for p in fresh if p not in had]
        if had:
            self._warn(f"not checkpointed, so `arreio undo` cannot restore them: {_listed(had, why)}")
        # A build output (gitignored) is the common case, round after round: said the first time only.
        ignored = [p for p in made if why[p][2] == IGNORED_WHY]
        said = [p for p in made if p not in ignored or not self.noted_ignored]
        self.noted_ignored = self.noted_ignored or bool(ignored)
        if said:
            self._say(f"undo will not remove {_listed(said, why)}", code=UNDO_LEAVES)

    # -- the end ----------------------------------------------------------------------------------------
    def finish(self, report: RunReport) -> CheckpointSection:
        """The report's checkpoint section: what the run changed, the checkpoint before it."""
        self.close_round()
        said = unsaid(report.warnings, self.warnings)
        if self.git is None:
            return CheckpointSection(warnings=said)  # checkpoints were off: `changes` stays None
        recorder = self.recorder
        if recorder is None or recorder.first is None:
            return CheckpointSection(changes=empty_changes(), warnings=said)
        try:
            end = recorder.finish()
        except (CheckpointError, OSError) as error:
            failed = f"checkpoints: the run's summary was not recorded: {error}"
            return CheckpointSection(changes=empty_changes(), warnings=(*said, failed))
        if end is None:
            return CheckpointSection(changes=empty_changes(), warnings=said)
        pruned = self._auto_prune(recorder)
        return CheckpointSection(
            changes=shown_changes(end["changes"]),  # the report and `done` are JSON: names made safe
            checkpoint_before=end["before"],
            checkpoint_skipped=tuple(shown(p) for p in end["skipped"]),
            warnings=(*said, pruned) if pruned else said,
        )

    def _auto_prune(self, recorder: Recorder) -> str | None:
        """Old checkpoints pruned to the configured age and size; a warning when that failed."""
        try:
            prune(
                recorder.repo,
                recorder.index,
                now=_utc(self.ctx.clock.now()),
                keep=timedelta(days=self.settings.keep_days),
                max_bytes=self.settings.max_total_bytes,
                protect=[self.ctx.run_id],
            )
        except (CheckpointError, OSError) as error:
            return f"checkpoints: pruning old checkpoints failed: {error}"
        return None


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class CheckpointHook(RunHook):
    name = "checkpoints"

    def __init__(self, state: _RunCheckpoints) -> None:
        self.state = state

    def at_unit_start(self, turn: Turn) -> list[ev.Event]:
        return self.state.drain()

    async def before_tool(self, turn: Turn, call: ToolCallPart) -> None:
        """Never decides anything: it only saves the tree before the first call of a round that may
        change it. A sub-agent's calls run inside the parent's `delegate` round, which is saved."""
        tool = turn.tools.get(call.name)
        # Only arreio's own tools are taken at their word: an MCP server that says readOnlyHint may write.
        read_only = getattr(tool, "read_only", False) is True and not getattr(tool, "remote", False)
        if not turn.agent and tool is not None and may_change(call.name, read_only=read_only):
            self.state.before_call(turn.totals.steps(), call)

    def after_tool(self, turn: Turn, call: ToolCallPart, result: ToolResult) -> list[ev.Event]:
        if not turn.agent:
            self.state.ran(call)
        return self.state.drain()

    async def after_tool_round(self, turn: Turn) -> list[ev.Event]:
        if not turn.agent:
            self.state.close_round()
        return self.state.drain()


def _writable_roots(ctx: RunContext) -> list[str]:
    """`sandbox.writable_roots` as configured (the sandbox feature validates the section)."""
    section = getattr(ctx.settings, "sandbox", None) or {}
    roots = section.get("writable_roots") if isinstance(section, dict) else None
    return [r for r in roots or [] if isinstance(r, str)]


class CheckpointFeature(Feature):
    """Checkpoints around tool rounds (config `checkpoints:`); first in the engine's features, because
    a `before_tool` decision (an approval asked at the terminal) ends the asking: the checkpoint must
    be taken before any hook can decide, whatever it decides."""

    name = "checkpoints"

    def __init__(self) -> None:
        self._run: _RunCheckpoints | None = None  # a started run's (`start`), else None

    def check(self, ctx: RunContext) -> None:
        ctx.section(checkpoint_settings)

    def start(self, ctx: RunContext) -> CheckpointFeature:
        return CheckpointFeature()

    def hooks(self, ctx: RunContext) -> list[RunHook]:
        settings = ctx.section(checkpoint_settings)
        if not settings.enabled:
            return []
        untrusted = agent_writable(ctx.cwd, ctx.env, _writable_roots(ctx))
        self._run = _RunCheckpoints(ctx, settings, find_git(ctx.env, untrusted), untrusted)
        return [CheckpointHook(self._run)]

    def run_changes(self, ctx: RunContext) -> CheckpointChanges | None:
        state = self._run
        if state is None or state.off:
            return None
        state.close_round()
        return CheckpointChanges(state.recorder)

    def after_run(self, ctx: RunContext, report: RunReport) -> CheckpointSection | None:
        state, self._run = self._run, None
        return state.finish(report) if state is not None else None
