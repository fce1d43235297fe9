"""The RunReport: the output funnel's product, written to `.arreio/runs/<run-id>/report.json`.

The run builds it from its own counters, then asks each feature's per-run object for its `Section`
(`Feature.after_run`): a frozen value holding the fields that feature owns and the warnings it adds.
The run folds each section in (`RunReport.with_section`) — the report is frozen, so no feature writes
into it, nor into another's fields; `tests/test_architecture.py` holds the rule on the source.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from arreio.engine.core.atomic import write_atomic
from arreio.engine.core.events import Verdict

REPORT_VERSION = 1


class RunReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    version: int = REPORT_VERSION
    run_id: str
    session_id: str
    model: str
    goal: str = ""
    verdict: Verdict
    exit_code: int
    message: str = ""
    final_text: str = ""
    started_at: str
    ended_at: str
    duration_s: float
    steps: int = 0
    tool_calls: int = 0
    tools_used: dict[str, int] = Field(default_factory=dict)
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    tokens_estimated: bool = False  # some counts are arreio's estimates: a server reported none
    cache_share: float = 0.0
    cost_usd: float | None = None
    warnings: list[str] = Field(default_factory=list)
    events_path: str = ""
    tool_schema_tokens: int = 0  # estimated tokens of the tool schemas sent with each model call
    # governance: the ceiling that ended the run ({kind, limit, value, message}), the approval
    # decisions the run made or applied, and where a partial result was written
    ceiling: dict[str, Any] | None = None
    approvals: list[dict[str, Any]] = Field(default_factory=list)
    partial_path: str | None = None
    # Context engineering (engine/context/feature.py): estimated tokens, calibrated to reported usage.
    peak_context_tokens: int = 0
    compactions: int = 0
    context_tokens_before: list[int] = Field(default_factory=list)  # one entry per compaction
    context_tokens_after: list[int] = Field(default_factory=list)
    pruned_results: int = 0
    pruned_rereads: int = 0  # reads of a path whose result was pruned earlier in the run
    result_sets: int = 0
    stable_prefix_share: float = 0.0  # share of input tokens that repeated the previous request's prefix
    audit_head: dict | None = None  # {"seq", "hash"} of the journal's last entry when the run ended
    # Checkpoints: what the run changed in the working tree ({"created", "modified", "deleted"}: paths),
    # the checkpoint before its first change (`arreio undo` restores it), files left out of checkpoints
    changes: dict[str, list[str]] | None = None
    checkpoint_before: str | None = None
    checkpoint_skipped: list[str] = Field(default_factory=list)
    # Structured output (`--output-schema`): the answer as a JSON value valid against the schema, or
    # None (no schema, or no valid answer: then `message` says what was wrong)
    final_json: Any = None
    # Fallback models: each model that served a call, with its tokens and estimated cost
    # ({model: {input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd}}), and
    # every switch the run made ({from, to, reason}); cost_usd above is the models' sum
    cost_by_model: dict[str, dict[str, Any]] = Field(default_factory=dict)
    model_switches: list[dict[str, str]] = Field(default_factory=list)

    def with_section(self, section: Section) -> RunReport:
        """This report with one feature's section folded in: its fields set, its warnings appended."""
        update = {**dict(self), **section.fields(), "warnings": [*self.warnings, *section.warnings]}
        return type(self).model_validate(update)


# -- the sections features return -----------------------------------------------------------------
@dataclass(frozen=True)
class Section:
    """One feature's part of the report: the warnings it adds, appended as given after those already
    there (`unsaid` leaves out what the report says already). Subclasses add the fields they own."""

    warnings: tuple[str, ...] = ()

    def fields(self) -> dict[str, Any]:
        """The report fields this section sets (every dataclass field but `warnings`)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "warnings"}


@dataclass(frozen=True)
class ToolSection(Section):
    """The tools the run offered (engine/features/resolver.py)."""

    tool_schema_tokens: int = 0  # estimated tokens of the tool schemas sent with each model call


@dataclass(frozen=True)
class ContextSection(Section):
    """Context engineering (engine/context/feature.py): estimated tokens, calibrated to reported usage."""

    peak_context_tokens: int = 0
    compactions: int = 0
    context_tokens_before: tuple[int, ...] = ()  # one entry per compaction
    context_tokens_after: tuple[int, ...] = ()
    pruned_results: int = 0
    pruned_rereads: int = 0
    result_sets: int = 0
    stable_prefix_share: float = 0.0


@dataclass(frozen=True)
class GovernanceSection(Section):
    """Governance (engine/governance/feature.py): the ceiling that ended the run, the approval
    decisions, the audit journal's head, where a partial result was written."""

    ceiling: dict[str, Any] | None = None
    approvals: tuple[dict[str, Any], ...] = ()
    audit_head: dict[str, Any] | None = None
    partial_path: str | None = None


@dataclass(frozen=True)
class CheckpointSection(Section):
    """Checkpoints (engine/governance/checkpointing.py): what the run changed (None: checkpoints were
    off), the checkpoint before its first change, the files left out."""

    changes: dict[str, list[str]] | None = None
    checkpoint_before: str | None = None
    checkpoint_skipped: tuple[str, ...] = ()


def unsaid(said: Iterable[str], new: Iterable[str]) -> tuple[str, ...]:
    """`new`'s warnings that neither `said` nor an earlier one of `new` holds, in order."""
    out: list[str] = []
    seen = set(said)
    for warning in new:
        if warning not in seen:
            seen.add(warning)
            out.append(warning)
    return tuple(out)


def write_report(report: RunReport, path: Path, *, durable: bool = True) -> None:
    write_atomic(path, json.dumps(report.model_dump(), indent=2, ensure_ascii=False) + "\n", durable=durable)
