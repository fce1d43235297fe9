"""The composition root: the one place real adapters and feature layers are wired into the pipeline."""

from __future__ import annotations

from arreio.engine.conveyor.pipeline import PipelineDeps


def pipeline_deps() -> PipelineDeps:
    """Everything a CLI run needs: the real clock and providers (defaults) plus each feature layer."""
    from arreio.curator.feature import SkillsFeature
    from arreio.engine.context.feature import ContextFeature
    from arreio.engine.governance.feature import GovernanceFeature
    from arreio.engine.tools.delegate import DelegateFeature
    from arreio.engine.tools.mcp.feature import McpFeature
    from arreio.engine.tools.resolver import ToolReportFeature
    from arreio.engine.tools.web.feature import WebFeature
    from arreio.learning.stage import LearningStage
    from arreio.memory.feature import MemoryFeature
    from arreio.memory.knowledge.feature import KnowledgeFeature

    # Governance first: its ceilings, approvals and redaction wrap every other feature's hooks.
    features = [
        GovernanceFeature(), MemoryFeature(), SkillsFeature(), KnowledgeFeature(), McpFeature(), WebFeature(),
        DelegateFeature(), ToolReportFeature(), ContextFeature(),
    ]
    return PipelineDeps(features=features, learning=LearningStage())
