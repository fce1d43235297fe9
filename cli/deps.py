"""The composition root: the one place real adapters are wired into the pipeline."""

from __future__ import annotations

from arreio.engine.pipeline import PipelineDeps


def pipeline_deps() -> PipelineDeps:
    """Everything a CLI run needs. Feature layers (memory, skills, knowledge) plug in here."""
    return PipelineDeps()
