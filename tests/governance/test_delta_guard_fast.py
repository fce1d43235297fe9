"""The stream guard tries its partial pattern only where a match can begin (a lead of the
redactor's pattern, or the first letters of one at the text's end). It must find exactly what a scan
of every position finds: on every prefix of every corpus text (a stream's held text is such a
prefix), and on random mixes of leads, secrets, words and look-alike characters."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from arreio.engine.walls.delta_guard import DeltaGuard
from arreio.engine.walls.redact import Redactor

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "secrets"
_yaml = YAML(typ="safe")
CASES: list[dict] = [
    case
    for name in ("hostile", "benign", "spellings", "lookalikes")
    for case in _yaml.load((CORPUS / f"{name}.yaml").read_text())
]
LONG_KEY = "sk-proj-" + "Zx7Qw" * 30  # 158 characters: longer than the starts the guard keeps whole
ENV = {
    "MY_API_KEY": "sk-test-Zq8vN3xL0pR7tY2wK9mB4cD6",
    "DB_PASSWORD": "hunter2-correct-horse-battery",
    "OPENAI_API_KEY": LONG_KEY,
}
PIECES = [
    "Bearer ",
    "bearer",
    "Authorization: ",
    'password: "',
    "passwd=",
    "api_key=",
    "token ",
    "ghp_",
    "sk-",
    "AKIA",
    "https://",
    "http://user:",
    "@host/db",
    "-----BEGIN RSA PRIVATE KEY-----\n",
    "MIIEow",
    "\n-----END",
    "xoxb-",
    "eyJ",
    "hooks.slack.com/services/",
    "curl -u ",
    "secret",
    "login ",
    "ſecret",
    "İ",
    "K",
    "é — ✓",
    "日本語",
    " ",
    "\n",
    "abc",
    "0123456789",
    "Zq8vN3xL0pR7tY2wK9mB4cD6",
    "sk-test-Zq8vN3xL0pR7tY2wK9mB4cD6",
    "hunter2-correct-horse-battery",
    '"',
    "'",
    ":",
    "=",
    LONG_KEY,
    LONG_KEY[:40],
    LONG_KEY[:33],
    LONG_KEY[:31],
    LONG_KEY[:120],
    LONG_KEY[5:60],
]


def _spans(matches: list) -> list[tuple[int, int, bool]]:
    # A scan also reports the empty text at the very end as a partial match (nothing yet of
    # anything); it starts at the text's end, so it never holds anything back.
    return [(m.start(), m.end(), bool(m.partial)) for m in matches if m.end() > m.start()]


def _check(guard: DeltaGuard, text: str) -> None:
    full = list(guard._partial.finditer(text, partial=True))
    assert _spans(guard._matches(text)) == _spans(full), repr(text)


@pytest.mark.parametrize("env", [{}, ENV], ids=["no-env", "env-secrets"])
def test_every_prefix_of_every_corpus_text(env: dict[str, str]) -> None:
    guard = DeltaGuard(Redactor(env))
    for case in CASES:
        text = case["text"]
        step = max(1, len(text) // 60)
        for end in range(0, len(text) + 1, step):
            _check(guard, text[:end])
        _check(guard, text)


def test_random_mixes_of_leads_and_words() -> None:
    guard = DeltaGuard(Redactor(ENV))
    rng = random.Random(23)
    for _ in range(4000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12)))
        cut = rng.randint(0, len(text))
        _check(guard, text[:cut])
