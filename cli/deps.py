"""The composition root: the one place the layers above the engine are wired into the pipeline."""

from __future__ import annotations

import gc

from arreio.engine.conveyor.pipeline import PipelineDeps

_heap_frozen = False


def pipeline_deps() -> PipelineDeps:
    """Everything a CLI run needs: the engine's own features (governance, tool families, context
    engineering) with memory, skills and knowledge among them, and the learning pass."""
    from arreio.curator.feature import SkillsFeature
    from arreio.engine.conveyor.features import engine_features
    from arreio.learning.stage import LearningStage
    from arreio.memory.feature import MemoryFeature
    from arreio.memory.knowledge.feature import KnowledgeFeature

    features = engine_features(MemoryFeature(), SkillsFeature(), KnowledgeFeature())
    _freeze_startup_heap()
    return PipelineDeps(features=features, learning=LearningStage())


def _freeze_startup_heap() -> None:
    """Once per process, with every layer imported: move what exists now (modules, classes,
    functions — ~44,000 objects, alive until exit) out of the cyclic collector's reach, so each full
    collection of a long run walks only the run's own objects (issue 23: those pauses were a third
    of what a 1,000-turn run's last tenth spent beyond its first). What is frozen is still freed by
    refcounting; only a cycle that is garbage at this moment would outlive its use, and there is
    none to speak of right after the imports."""
    global _heap_frozen
    if not _heap_frozen:
        _heap_frozen = True
        gc.freeze()
