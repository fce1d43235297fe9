"""The engine's own features: what every run has unless the caller says otherwise (docs/architecture.md section 1:
defaults are the real thing). A library caller who builds `PipelineDeps()` gets ceilings, approvals,
redaction, the audit journal, compaction and the tool families without knowing to ask."""

from __future__ import annotations

from arreio.engine.context.feature import ContextFeature
from arreio.engine.core.ports import PromptScreen
from arreio.engine.features.delegate import DelegateFeature
from arreio.engine.features.mcp import McpFeature
from arreio.engine.features.resolver import ToolReportFeature
from arreio.engine.features.sandbox import SandboxFeature
from arreio.engine.features.tracing import TracingFeature
from arreio.engine.features.web import WebFeature
from arreio.engine.governance.checkpointing import CheckpointFeature
from arreio.engine.governance.feature import GovernanceFeature
from arreio.engine.governance.user_hooks import UserHooksFeature
from arreio.engine.loop.feature import Feature


def engine_features(*layers: Feature, screen: PromptScreen | None = None) -> list[Feature]:
    """Checkpoints before all: the first `before_tool` decision ends the asking (an approval answered
    at the terminal runs the call at once), and the tree must be saved whatever is decided. Then the
    user's hooks: a `pre_tool_use` hook refuses a call before anyone is asked to approve it. Then
    governance: its ceilings, approvals and redaction wrap every other feature's hooks. Then
    the layers above the engine (memory, skills, knowledge: `cli/deps.py`), the tool families, the
    tool report, and context engineering last, so it measures and compacts what the others produced.
    `screen` reads what MCP servers say about themselves before it enters the prompt (the memory scan,
    from `cli/deps.py`; none for a library caller that brings no memory layer). Tracing comes first of
    all: it decides nothing, and must time every model call (a decision of an earlier hook would end
    the asking before it)."""
    return [
        TracingFeature(),
        CheckpointFeature(),
        UserHooksFeature(),
        GovernanceFeature(),
        *layers,
        SandboxFeature(),
        McpFeature(screen),
        WebFeature(),
        DelegateFeature(),
        ToolReportFeature(),
        ContextFeature(),
    ]
