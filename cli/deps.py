"""The composition root: the one place the layers above the engine are wired into the pipeline."""

from __future__ import annotations

from arreio.cli import heap
from arreio.engine.conveyor.pipeline import PipelineDeps


def pipeline_deps(*, settle: bool = True) -> PipelineDeps:
    """Everything a CLI run needs: the engine's own features (governance, tool families, context
    engineering) with project instructions, memory, skills and knowledge among them, and the learning pass.
    `settle=False` leaves the collector alone: a program that embeds arreio (`arreio.api`) owns its own heap."""
    from arreio.curator.feature import SkillsFeature
    from arreio.engine.conveyor.features import engine_features
    from arreio.learning.stage import LearningStage
    from arreio.memory.feature import MemoryFeature
    from arreio.memory.instructions_feature import InstructionsFeature
    from arreio.memory.knowledge.feature import KnowledgeFeature
    from arreio.memory.scan import prompt_screen

    features = engine_features(InstructionsFeature(), MemoryFeature(), SkillsFeature(), KnowledgeFeature(),
                               screen=prompt_screen)
    if settle:
        heap.settle()  # the start-up's objects frozen, the collector's usual thresholds back
    return PipelineDeps(features=features, learning=LearningStage())
