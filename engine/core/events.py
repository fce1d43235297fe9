"""The typed events a run yields (docs/architecture.md section 3). Names and fields are public API.

A run is an async generator of these; the CLI renders them live (rich) or prints them as JSON Lines
(`--json`), `events.jsonl` stores them, and the RunReport is computed from them. `type` is always the
first field, so a JSON line starts with it. Add fields with defaults; never rename an event.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

Verdict = Literal["success", "partial", "failed", "paused", "cancelled"]


class RunStart(BaseModel):
    """A run began. `resumed` is true when it continues a saved session."""

    type: Literal["run_start"] = "run_start"
    run_id: str
    session_id: str
    model: str
    cwd: str
    resumed: bool = False
    agent: str | None = None  # set on a sub-agent's events: which child emitted it
    model_chosen: str | None = None  # why arreio chose `model` (none was configured); None: it was configured
    # The project instruction files (AGENTS.md, CLAUDE.md) the session's prompt obeys, as a user reads them.
    instructions: list[str] = []


class UnitStart(BaseModel):
    """A unit of work (the goal, or one plan unit) began."""

    type: Literal["unit_start"] = "unit_start"
    unit_id: str
    goal: str
    agent: str | None = None  # set on a sub-agent's events: which child emitted it


class TextDelta(BaseModel):
    """A piece of the model's visible answer, as it streams."""

    type: Literal["text_delta"] = "text_delta"
    text: str
    agent: str | None = None  # set on a sub-agent's events: which child emitted it


class ThinkingDelta(BaseModel):
    """A piece of the model's reasoning, as it streams."""

    type: Literal["thinking_delta"] = "thinking_delta"
    text: str
    agent: str | None = None  # set on a sub-agent's events: which child emitted it


class ToolStart(BaseModel):
    """A tool call is about to execute (after the model finished asking for it)."""

    type: Literal["tool_start"] = "tool_start"
    call_id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    agent: str | None = None  # set on a sub-agent's events: which child emitted it


class ToolEnd(BaseModel):
    """A tool call finished. `preview` is the first line(s) of the result, for display."""

    type: Literal["tool_end"] = "tool_end"
    call_id: str
    name: str
    is_error: bool = False
    status: str = "ok"
    preview: str = ""
    chars: int = 0
    agent: str | None = None  # set on a sub-agent's events: which child emitted it


class Compaction(BaseModel):
    """The history was compacted: estimated tokens before and after."""

    type: Literal["compaction"] = "compaction"
    tokens_before: int
    tokens_after: int
    messages_removed: int = 0
    agent: str | None = None  # set on a sub-agent's events: which child emitted it
    kind: str = "summary"  # "summary": history replaced by a summary; "prune": old results stubbed


class Retry(BaseModel):
    """A model call failed in a retryable way and will be tried again after `delay_s`.
    `withdraws_text`: the failed attempt had streamed text, which is withdrawn — every `text_delta`
    of this model call before this event is void, and the retried reply streams whole from its start
    (a sampling model does not repeat itself: what was shown must add up to what is kept)."""

    type: Literal["retry"] = "retry"
    attempt: int
    delay_s: float
    reason: str
    withdraws_text: bool = False
    agent: str | None = None  # set on a sub-agent's events: which child emitted it


class ModelSwitch(BaseModel):
    """The model still failed after the harness's retries with a retryable error (overloaded, 5xx, a
    rate limit past `retry_after_max_s`, a cut stream): the step is retried on the next of the run's
    `fallback_models`, which serves the rest of the run. In JSON the fields are `from`, `to`, `reason`."""

    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True, serialize_by_alias=True)

    type: Literal["model_switch"] = "model_switch"
    from_model: str = Field(alias="from")
    to_model: str = Field(alias="to")
    reason: str
    withdraws_text: bool = False  # as on `retry`: the failed model's streamed text is void
    agent: str | None = None  # set on a sub-agent's events: which child emitted it


class ApprovalRequired(BaseModel):
    """A sensitive call waits for a human decision: asked at the terminal, or the run pauses here.
    `summary` is what would run (the command line, the path written, else the arguments); `command`
    is how to decide later; `reason` is the rule that asked."""

    type: Literal["approval_required"] = "approval_required"
    session_id: str
    call_id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    command: str = ""
    summary: str = ""
    reason: str = ""
    agent: str | None = None  # set on a sub-agent's events: which child emitted it


class Ceiling(BaseModel):
    """A ceiling (steps, tool calls, repetition, stall, budget) was reached."""

    type: Literal["ceiling"] = "ceiling"
    kind: str
    limit: float
    value: float
    message: str
    agent: str | None = None  # set on a sub-agent's events: which child emitted it


class GateResult(BaseModel):
    """A gate judged the result."""

    type: Literal["gate_result"] = "gate_result"
    gate: str
    passed: bool
    detail: str = ""
    agent: str | None = None  # set on a sub-agent's events: which child emitted it


class Lesson(BaseModel):
    """One proposal the learning gate decided on: `bucket` applied / rejected / failed, where it was
    to go (`target` memory or user, `action` add / replace / remove; empty for a malformed one), what
    it says (`preview`, cut to 80 characters) and `reason`, the gate's or the store's."""

    bucket: Literal["applied", "rejected", "failed"]
    target: str = ""
    action: str = ""
    preview: str = ""
    reason: str = ""


class LearningPassDone(BaseModel):
    """The post-run learning pass finished (or failed closed, then `error` says why); `lessons`
    lists each proposal it decided on."""

    type: Literal["learning_pass_done"] = "learning_pass_done"
    applied: int = 0
    rejected: int = 0
    failed: int = 0
    error: str | None = None
    lessons: list[Lesson] = Field(default_factory=list)
    agent: str | None = None  # set on a sub-agent's events: which child emitted it


class Warning_(BaseModel):
    """Something the user should know that does not stop the run."""

    type: Literal["warning"] = "warning"
    message: str
    code: str = ""
    agent: str | None = None  # set on a sub-agent's events: which child emitted it


class UnitEnd(BaseModel):
    """A unit of work ended: its outcome travels here (the stream ends in its result). `final_text`
    is the model's last answer for it; `exit_code` and `message` say how and why it ended."""

    type: Literal["unit_end"] = "unit_end"
    unit_id: str
    verdict: Verdict
    final_text: str = ""
    steps: int = 0
    exit_code: int = 0
    message: str = ""
    agent: str | None = None  # set on a sub-agent's events: which child emitted it
    # With an output schema (`--output-schema`, a plan unit's `output_schema`): the answer as the JSON
    # value it is, validated against the schema (None without one, or when no valid answer came).
    final_json: Any = None


class Done(BaseModel):
    """The run ended. Always the last event. `exit_code` follows docs/architecture.md section 9."""

    type: Literal["done"] = "done"
    verdict: Verdict
    exit_code: int
    message: str = ""
    final_text: str = ""
    session_id: str | None = None  # the session to continue (`arreio run --resume ID`), as on run_start
    report_path: str | None = None
    steps: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    tokens_estimated: bool = False  # some token counts are arreio's estimates: a server reported none
    # What the run changed in the working tree: {"created": [...], "modified": [...], "deleted": [...]}
    # (paths relative to the working directory; None when checkpoints are off)
    changes: dict[str, list[str]] | None = None
    # What the run cost, as its report says: estimated US dollars (None when the model's price is
    # unknown — never a guessed $0), and the share of input tokens served from the prompt cache (0..1).
    cost_usd: float | None = None
    cache_share: float | None = None
    free: bool = False  # offline, replayed from a cassette, or served locally: no model was billed ($0)
    free_because: str | None = None  # why it is free: "offline" | "replay" | "local"
    agent: str | None = None  # set on a sub-agent's events: which child emitted it
    # `--output-schema`: the run's answer as a JSON value valid against the schema (None without a
    # schema, or when the run did not end with a valid answer); `final_text` is then its JSON text.
    final_json: Any = None


Event = Annotated[
    RunStart
    | UnitStart
    | TextDelta
    | ThinkingDelta
    | ToolStart
    | ToolEnd
    | Compaction
    | Retry
    | ApprovalRequired
    | Ceiling
    | GateResult
    | LearningPassDone
    | Warning_
    | UnitEnd
    | Done
    | ModelSwitch,
    Field(discriminator="type"),
]

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)

EVENT_TYPES = (
    "run_start",
    "unit_start",
    "text_delta",
    "thinking_delta",
    "tool_start",
    "tool_end",
    "compaction",
    "retry",
    "approval_required",
    "ceiling",
    "gate_result",
    "learning_pass_done",
    "warning",
    "unit_end",
    "done",
    "model_switch",
)


def event_to_json(event: BaseModel) -> str:
    """One JSON line for an event, `type` first (field order is declaration order)."""
    return event.model_dump_json()


def event_from_json(line: str) -> Any:
    return EVENT_ADAPTER.validate_json(line)
