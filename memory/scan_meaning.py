"""The scan's second reader: what a text *means*, in any language the embedder knows.

The rules (`scan_conduct`, `scan_safeguards`, `scan_recipes`, `scan_outbound`) read English and a
few set phrases in other languages; the next language walks past a phrase list. So a text the
rules pass is also compared, sentence group by sentence group (those not in English: `english`),
with the labelled
examples in `scan_examples.yaml` through the multilingual e5 embedder the knowledge base ships
(`arreio[vectors]`): a group is refused when its nearest hostile example is close
(`MIN_SIMILARITY`) *and* the nearest hostile examples are clearly closer than the nearest honest
ones (`MARGIN`). The honest examples are
the notes that look risky — security research, install recipes, approval preferences — so looking
alike is not enough (docs/architecture.md invariant 9: the margin was set on the corpora under fixtures/scan/
so that no honest entry there is refused, with room to spare).

Optional by design: without the embedder (not installed, or `ARREIO_KB_EMBEDDER=none`) the rules
run alone, and `arreio doctor` says so. With it, a verdict costs one embedding per sentence group
the first time that text is seen; verdicts are kept in memory and on disk (`~/.cache/arreio/`,
keyed by a hash of the text, the model and the examples), so a store or skill that has not changed
is judged without loading the model.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from arreio.engine.core.ports import process_env

if TYPE_CHECKING:
    import numpy as np

    from arreio.memory.knowledge.embedders import Embedder

__all__ = ["MeaningFinding", "judge", "meaning_status", "MIN_SIMILARITY", "MARGIN"]

EXAMPLES = Path(__file__).with_name("scan_examples.yaml")
VECTORS = Path(__file__).with_name("scan_examples.npz")
MIN_SIMILARITY = 0.88  # the nearest hostile example at least this close (cosine)
MARGIN = 0.025  # and the three nearest hostile ones this much closer, on average, than the three nearest honest
_NEAREST = 3
_GROUP_CHARS = 320  # e5 reads ~512 tokens; the examples are one or two sentences, and so are the groups
_MAX_GROUPS = 48  # a longer text (a skill's reference file) is read by the rules alone past this
_MARKUP = re.compile(r"<!--|-->|</?[a-zA-Z][^>]{0,200}>|\[//\]:\s*#\s*[(<\"']?|[`*_#>|]+")
_SENTENCE = re.compile(r"(?<=[.!?。！？;；])\s+|\n+|(?<=[。！？；])")


# The most frequent English words. A sentence group made mostly of them is English, and English is
# what the rules read best: the rules know negation and scope ("never disable the sandbox", "any
# make target"), which an embedding does not, so the meaning check reads the other languages only.
_ENGLISH = frozenset(
    "the an and or but if then when while to of at by for with from into about is are was were be been being have has "
    "had does did not never always you your it its this that these those there here we our us they them their he she "
    "his her all any every each some more most other only also just than too very can could will would should must "
    "may might shall use make get set add keep send before after what which who whose how why where because same new "
    "old first last next one two user users file files test tests command commands project repo code please instead "
    "like such via up out over under prefers uses runs".split()
)
# The function words of the other languages written in Latin letters that the examples cover (and
# of a few more): a text with more of these than of English ones is not English.
_OTHER = frozenset(
    "o os um uma e é de do da dos das que para com não em no na nos nas por se ao aos sempre nunca você seu sua "
    "el la los las un una y en es del al con por para lo le su sus siempre nunca tu usted "
    "le les des et est une du au aux pour avec ne pas sur dans ce cette tu vous toujours jamais "
    "der die das den dem des und ist nicht mit für auf ein eine einen sie du immer nie oder "
    "il lo gli della di che per con non sono sempre mai".split()
)
_LATIN_WORD = re.compile(r"[^\W\d_]+")
_ASCII_WORD = re.compile(r"(?<![^\W\d_])[a-z]+(?![^\W\d_])")


def english(text: str) -> bool:
    """True when the text is English prose: mostly Latin letters, and more English function words
    than those of the other languages (at least one)."""
    words = _LATIN_WORD.findall(text.lower())
    if not words:
        return False
    latin = _ASCII_WORD.findall(text.lower())
    if len("".join(latin)) < 0.8 * len("".join(words)):
        return False
    ours = len(_ENGLISH.intersection(latin)) and sum(map(_ENGLISH.__contains__, latin))
    return ours >= 1 and ours > sum(map(_OTHER.__contains__, words))


@dataclass(frozen=True)
class MeaningFinding:
    """A sentence group whose meaning lies next to hostile examples: the nearest one's category and
    similarity (cosine), and how much closer the three nearest hostile examples are than the three
    nearest honest ones (`margin`)."""

    category: str
    hostile: float
    margin: float


def groups(text: str) -> list[str]:
    """The text without markup, cut into sentence groups of at most `_GROUP_CHARS` characters."""
    plain = " ".join(_MARKUP.sub(" ", text).split())
    if len(plain) <= _GROUP_CHARS:
        return [plain] if len(plain) >= 8 else []
    out: list[str] = []
    for sentence in _SENTENCE.split(_MARKUP.sub(" ", text)):
        sentence = " ".join(sentence.split())
        if not sentence:
            continue
        if out and len(out[-1]) + 1 + len(sentence) <= _GROUP_CHARS:
            out[-1] += " " + sentence
        else:
            out.extend(sentence[i : i + _GROUP_CHARS] for i in range(0, len(sentence), _GROUP_CHARS))
    return [g for g in out if len(g) >= 8]


class _Reader:
    """The embedder, the example vectors and the verdicts seen so far (this process and on disk)."""

    def __init__(self, embedder: Embedder) -> None:
        import numpy as np

        self.embedder = embedder
        self.lock = threading.Lock()
        self.categories, hostile, honest, digest = _examples(embedder)
        self.hostile = hostile.astype(np.float32)
        self.honest = honest.astype(np.float32)
        self.key = hashlib.sha256(f"{embedder.name}|{digest}|{_NEAREST}".encode()).hexdigest()[:16]
        self.seen: dict[str, tuple[int, float, float]] = {}
        self.disk = _cache_file(self.key)
        self._load()

    def _load(self) -> None:
        if self.disk is None:
            return
        try:
            lines = self.disk.read_text(encoding="utf-8").splitlines()
        except OSError:
            return
        for line in lines[-50_000:]:
            parts = line.split("\t")
            if len(parts) == 4:
                try:
                    self.seen[parts[0]] = (int(parts[1]), float(parts[2]), float(parts[3]))
                except ValueError:
                    continue  # a torn line from a crash: the text is judged again

    def scores(self, texts: list[str]) -> list[tuple[int, float, float]]:
        keys = [hashlib.sha256(t.encode("utf-8")).hexdigest()[:32] for t in texts]
        with self.lock:
            missing = [(k, t) for k, t in zip(keys, texts) if k not in self.seen]
            if missing:
                self._embed(missing)
            return [self.seen[k] for k in keys]

    def _embed(self, missing: list[tuple[str, str]]) -> None:
        import numpy as np

        vectors = np.stack([self.embedder.embed_query(text) for _, text in missing])
        hostile, honest = vectors @ self.hostile.T, vectors @ self.honest.T
        # the mean of the three nearest on each side: one stray example on either side moves it less
        near_hostile = np.sort(hostile, axis=1)[:, -_NEAREST:].mean(axis=1)
        near_honest = np.sort(honest, axis=1)[:, -_NEAREST:].mean(axis=1)
        lines = []
        for row, (key, _) in enumerate(missing):
            best = int(hostile[row].argmax())
            entry = (best, round(float(hostile[row, best]), 4), round(float(near_hostile[row] - near_honest[row]), 4))
            self.seen[key] = entry
            lines.append(f"{key}\t{entry[0]}\t{entry[1]}\t{entry[2]}\n")
        if self.disk is not None:
            try:
                self.disk.parent.mkdir(parents=True, exist_ok=True)
                with self.disk.open("a", encoding="utf-8") as out:
                    out.write("".join(lines))
            except OSError:
                self.disk = None  # a read-only home: verdicts stay in memory


def _cache_file(key: str) -> Path | None:
    env = process_env()
    root = env.get("XDG_CACHE_HOME") or (os.path.join(env["HOME"], ".cache") if env.get("HOME") else None)
    return Path(root) / "arreio" / f"scan-meaning-{key}.tsv" if root else None


def examples_digest() -> str:
    """A hash of the labelled examples: the shipped vectors are theirs only when it matches."""
    return hashlib.sha256(EXAMPLES.read_bytes()).hexdigest()[:16]


def load_examples() -> tuple[list[str], list[str], list[str]]:
    """`(categories, hostile texts, honest texts)`, the hostile texts in the order of their categories."""
    from ruamel.yaml import YAML

    data = YAML(typ="safe", pure=True).load(EXAMPLES.read_text(encoding="utf-8"))
    categories = [category for category, texts in data["hostile"].items() for _ in texts]
    hostile = [text for texts in data["hostile"].values() for text in texts]
    return categories, hostile, list(data["honest"])


def _examples(embedder: Embedder) -> tuple[list[str], np.ndarray, np.ndarray, str]:
    """The example vectors: the shipped file when it was built from these examples by this model,
    else embedded now (a second or two, once per process)."""
    import numpy as np

    categories, hostile, honest = load_examples()
    digest = examples_digest()
    try:
        shipped = np.load(VECTORS)
        if str(shipped["model"]) == embedder.name and str(shipped["digest"]) == digest:
            return categories, shipped["hostile"], shipped["honest"], digest
    except (OSError, KeyError, ValueError):
        pass
    return categories, _embed_all(embedder, hostile), _embed_all(embedder, honest), digest


def _embed_all(embedder: Embedder, texts: list[str]) -> np.ndarray:
    import numpy as np

    return np.stack([embedder.embed_query(text) for text in texts])


@lru_cache(maxsize=1)
def _reader() -> _Reader | None:
    from arreio.memory.knowledge.embedders import E5Embedder, check_choice

    try:
        if check_choice() not in ("auto", "e5") or not E5Embedder.available():
            return None
        return _Reader(E5Embedder(num_threads=1))  # one thread: the same sums, so the same verdicts, everywhere
    except Exception:  # noqa: BLE001 — a broken install leaves the rules alone, never a failed write
        return None


def meaning_status(env: Mapping[str, str] | None = None) -> str | None:
    """Why the meaning check is off (one line for `arreio doctor`), or None when it runs. Loads no model;
    an unknown `ARREIO_KB_EMBEDDER` is the ConfigError `check_choice` raises."""
    from arreio.memory.knowledge.embedders import ENV_VAR, E5Embedder, check_choice

    choice = check_choice(env)
    if choice in ("none", "hashing"):
        return f"rules only ({ENV_VAR}={choice})"
    if not E5Embedder.available():
        return "rules only (pip install 'arreio[vectors]' adds the meaning check in every language)"
    return None


def judge(text: str) -> MeaningFinding | None:
    """The first sentence group of `text` whose meaning is a hostile example's, or None (also when
    the embedder is not there)."""
    reader = _reader()
    if reader is None:
        return None
    parts = [part for part in groups(text)[:_MAX_GROUPS] if not english(part)]
    if not parts:
        return None
    for index, hostile, margin in reader.scores(parts):
        if hostile >= MIN_SIMILARITY and margin >= MARGIN:
            return MeaningFinding(reader.categories[index], hostile, margin)
    return None


def _build() -> None:
    """Embed the examples and write `scan_examples.npz` (run after editing scan_examples.yaml)."""
    import numpy as np

    from arreio.memory.knowledge.embedders import E5Embedder

    embedder = E5Embedder(num_threads=1)
    _, hostile, honest = load_examples()
    np.savez_compressed(
        VECTORS,
        hostile=_embed_all(embedder, hostile).astype(np.float16),
        honest=_embed_all(embedder, honest).astype(np.float16),
        model=embedder.name,
        digest=examples_digest(),
    )
    print(f"wrote {VECTORS.name}: {len(hostile)} hostile, {len(honest)} honest examples")


if __name__ == "__main__":  # pragma: no cover — the maintainer's step after editing the examples
    if sys.argv[1:] != ["--build"]:
        sys.exit("usage: python -m arreio.memory.scan_meaning --build")
    _build()
