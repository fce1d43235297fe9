"""A CLI run's dependencies: the library's composition root, then the start-up heap settled."""

from __future__ import annotations

from arreio.cli import heap
from arreio.engine.run.pipeline import PipelineDeps


def pipeline_deps() -> PipelineDeps:
    """What `arreio.api.composition.pipeline_deps` gives, with the start-up's objects frozen and the
    collector's usual thresholds back (a program that embeds arreio owns its own heap, so only the CLI does this)."""
    from arreio.api.composition import pipeline_deps as composed

    deps = composed()
    heap.settle()
    return deps
