"""The `context:` section of config.yaml (context engineering), validated here, not in `engine/core/config.py`.

```yaml
context:
  watermark: 0.6          # compact when the context reaches 60% of the window; 0 or null: never
  summary_model: null     # a cheaper model for summaries (default: the run's model)
  keep_tail_ratio: 0.2    # share of the window kept verbatim after a compaction
  resultset_threshold_chars: 12000   # larger results become queryable sets; 0: off
  enabled: true           # false: all of it off (no compaction, pruning, result sets)
```
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from arreio.engine.core.config import parse_section


class ContextSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(True, description="Master switch for compaction, pruning and result sets.")
    watermark: float | None = Field(
        0.6,
        ge=0,
        le=0.95,
        description="Compact when the estimated context reaches this share of the window; 0/null: off.",
    )
    window: int | None = Field(
        None, gt=0, description="The run model's context window in tokens (overrides the table)."
    )
    windows: dict[str, int] = Field(default_factory=dict, description="Per-model window overrides, {model: tokens}.")
    summary_model: str | None = Field(None, description="Model that writes compaction summaries (default: the run's).")
    summary_timeout_s: float | None = Field(
        None,
        gt=0,
        description="Longest wait for a summary before the fallback is used. Unset: 180 s for a cloud model; for a "
        "local server (loopback or private network) 180 s plus the transcript read at 2 tokens/s until the first "
        "chunk, then as long as the stream keeps producing (180 s at most between chunks).",
    )
    keep_tail_ratio: float = Field(
        0.2, gt=0, lt=0.9, description="Share of the window kept verbatim after a compaction."
    )
    keep_tail_tokens: int | None = Field(None, gt=0, description="The kept tail in tokens (overrides keep_tail_ratio).")
    prune: bool = Field(True, description="Replace old bulky tool results by a pointer stub before compacting.")
    prune_at: float | None = Field(
        0.5,
        ge=0,
        le=0.95,
        description="Prune once the context reaches this share of the window; 0/null: only at the watermark.",
    )
    prune_step: float = Field(
        0.05,
        ge=0,
        le=0.5,
        description="Past prune_at, prune once the results to stub hold this share of the window (0: every turn). "
        "Fewer, larger prunes: each one changes an old message, which breaks the provider's prompt cache "
        "from there on.",
    )
    prune_min_chars: int = Field(2_000, ge=200, description="Only results at least this long are pruned.")
    prune_exempt_tools: list[str] = Field(default_factory=list, description="Tools whose results are never pruned.")
    resultset_threshold_chars: int = Field(
        12_000, ge=0, description="Results longer than this become result sets; 0: off."
    )
    resultset_exempt_tools: list[str] = Field(
        default_factory=lambda: ["read_file", "result_query", "result_grep"],
        description="Tools whose results never become sets (a file read is text the model edits).",
    )
    resultset_preview_rows: int = Field(15, ge=0, le=200, description="Rows of a new set shown with its handle.")
    calibrate: bool = Field(True, description="Correct the token estimate from the usage providers report.")

    @property
    def compaction_on(self) -> bool:
        return self.enabled and bool(self.watermark)

    @property
    def resultsets_on(self) -> bool:
        return self.enabled and self.resultset_threshold_chars > 0


def load_context_settings(raw: dict[str, Any] | None) -> ContextSettings:
    """Validate `settings.context`; a bad value is one ConfigError naming `context.<field>`."""

    return parse_section(ContextSettings, raw, "context")


def context_settings(settings: Any) -> ContextSettings:
    """The run's `context:` section (`RunContext.section(context_settings)` parses it once per run)."""
    return load_context_settings(settings.context)
