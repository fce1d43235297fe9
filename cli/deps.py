"""The composition root: the one place real adapters and feature layers are wired into the pipeline."""

from __future__ import annotations

from arreio.engine.pipeline import PipelineDeps


def pipeline_deps() -> PipelineDeps:
    """Everything a CLI run needs: the real clock and providers (defaults) plus each feature layer."""
    from arreio.curator.feature import SkillsFeature
    from arreio.learning.stage import LearningStage
    from arreio.memory.feature import MemoryFeature

    return PipelineDeps(features=[MemoryFeature(), SkillsFeature()], learning=LearningStage())
