"""What a chat remembers between messages: which session it talks on, with which model or script,
and what each turn cost. Every message becomes `RunOptions` for the one conveyor: the first of a new
chat starts a session (its system prompt, with the memory snapshot, is assembled and frozen in the
session header then, docs/architecture.md invariant 3); every later one resumes that session with the message as
the new instruction — the very options `arreio run --resume ID "message"` builds."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arreio.engine.core.ports import process_env


@dataclass
class TurnRecord:
    """One message's run, as its `done` event told it (for /cost, /diff, /undo)."""

    run_id: str
    verdict: str
    steps: int
    tool_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    cache_share: float | None
    free: bool
    changed_files: bool | None = None  # None: not known (checkpoints off); False: the turn changed no file


@dataclass
class SideCost:
    """What the chat spent outside its turns' runs: a `/compact`'s summariser (for /cost)."""

    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    free: bool


@dataclass
class ChatState:
    cwd: Path
    model: str | None = None  # None: the session's (or config's) model
    script: Path | None = None
    learn: bool = False
    yes: bool = False
    max_steps: int | None = None
    session_id: str | None = None  # None until the first message starts a session (or /new)
    turns: list[TurnRecord] = field(default_factory=list)  # this chat's turns, oldest first
    side_costs: list[SideCost] = field(default_factory=list)  # /compact's summaries, oldest first
    env: dict[str, str] = field(default_factory=process_env)

    def store(self) -> Any:
        from arreio.engine.core.paths import state_dir
        from arreio.engine.session.store import SessionStore

        return SessionStore(state_dir(self.cwd, self.env) / "sessions")

    def latest(self) -> str:
        """`--continue`: the session last worked on here, or a UsageError saying there is none."""
        from arreio.engine.core.errors import UsageError

        store = self.store()
        found = store.latest(self.cwd)
        if (notice := store.passed_over(found)) is not None:
            print(f"arreio: warning: {notice}", file=sys.stderr)
        if found is None:
            raise UsageError(f"no session to continue in {self.cwd}: start one with `arreio chat`")
        return found

    def options(self, message: str) -> Any:
        """The run for one message: a new session, or this one resumed with the message as the new
        instruction."""
        from arreio.engine.run.pipeline import RunOptions

        return RunOptions(
            goal_text=message,
            model=self.model,
            script=self.script,
            resume=self.session_id,
            max_steps=self.max_steps,
            yes=self.yes,
            learn=self.learn,
            cwd=self.cwd,
            env=self.env,
        )

    def record(self, done: Any, run_id: str) -> TurnRecord:
        turn = TurnRecord(
            run_id=run_id,
            verdict=done.verdict,
            steps=done.steps,
            tool_calls=done.tool_calls,
            input_tokens=done.input_tokens,
            output_tokens=done.output_tokens,
            cost_usd=done.cost_usd,
            cache_share=done.cache_share,
            free=done.free,
            changed_files=None if done.changes is None else any(done.changes.values()),
        )
        self.turns.append(turn)
        return turn

    def record_compaction(self, stored: Any) -> SideCost:
        """A `/compact` (`StoredCompaction`): its summariser's tokens and cost join the chat's totals."""
        usage = stored.done.usage
        cost = SideCost(usage.input_tokens, usage.output_tokens, stored.cost_usd, stored.free)
        self.side_costs.append(cost)
        return cost

    def last_run(self) -> str | None:
        """The run of this chat's last message (what /diff and /undo work on); in a chat that has sent
        none yet, the session's last run (a resumed one); None with no session. (None went on to
        `arreio undo`'s own default, the folder's latest run: /undo in a new chat took back another
        session's changes.)"""
        if self.turns:
            return self.turns[-1].run_id
        if not self.session_id:
            return None
        from arreio.engine.session.file import Session

        try:
            session, _ = Session.open(self.store().path_for(self.session_id), repair=False)
        except Exception:  # noqa: BLE001 - unreadable: nothing of this session to act on
            return None
        session.close()
        return next((r["run_id"] for r in reversed(session.runs) if r.get("run_id")), None)

    def played_script(self) -> Path | None:
        """The script the next message plays: the chat's `--script`, or the one its session was started
        with (a scripted session resumes with its script while no model is named: `--offline` is the
        offline model, not the script)."""
        if self.script is not None or not self.session_id or self.model:
            return self.script
        from arreio.engine.session.file import Session

        try:
            session, _ = Session.open(self.store().path_for(self.session_id), repair=False)
        except Exception:  # noqa: BLE001 - unreadable: the next message says what is wrong with it
            return None
        session.close()
        return Path(session.header.script) if session.header.script else None

    def session_model(self) -> str:
        """The model the next message will use."""
        if self.model:
            return self.model
        if self.script is not None:
            return "offline (script)"
        if self.session_id:
            from arreio.engine.session.file import Session

            try:
                session, _ = Session.open(self.store().path_for(self.session_id), repair=False)
            except Exception:  # noqa: BLE001 - shown for information only: config's model then
                session = None
            if session is not None:
                session.close()
                return session.header.model
        from arreio.engine.core.config import load_settings
        from arreio.engine.providers.registry import model_for

        model, chosen = model_for(load_settings(self.cwd, self.env, {}), self.env)
        return f"{model} ({chosen})" if chosen else model
