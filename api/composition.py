"""The composition root: the one place the layers above the engine (memory, skills, knowledge, learning)
are wired into the pipeline. The CLI and programs that embed arreio both start runs from here."""

from __future__ import annotations

from typing import Any

from arreio.engine.core import events as ev
from arreio.engine.run.pipeline import PipelineDeps
from arreio.engine.tools.run_context import RunContext


class _Learning:
    """The learning pass (`arreio.learning.stage.LearningStage`), imported by the first run that
    learns: only `--learn` runs it, and its layer cost every start ~15 ms of imports."""

    async def run(self, ctx: RunContext, **kwargs: Any) -> ev.LearningPassDone:
        from arreio.learning.stage import LearningStage

        return await LearningStage().run(ctx, **kwargs)


def pipeline_deps() -> PipelineDeps:
    """Everything a run needs: the engine's own features (governance, tool families, context
    engineering) with project instructions, memory, skills and knowledge among them, and the learning pass."""
    from arreio.curator.feature import SkillsFeature
    from arreio.engine.features.defaults import engine_features
    from arreio.memory.feature import MemoryFeature
    from arreio.memory.instructions_feature import InstructionsFeature
    from arreio.memory.knowledge.feature import KnowledgeFeature
    from arreio.memory.scan import prompt_screen

    features = engine_features(
        InstructionsFeature(), MemoryFeature(), SkillsFeature(), KnowledgeFeature(), screen=prompt_screen
    )
    return PipelineDeps(features=features, learning=_Learning())
