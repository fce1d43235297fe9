"""`Redactor.text` tries its one combined pattern only where a match can begin (`_LEADS`).
It must give exactly what a scan of every position gives — on every corpus text, raw and JSON-encoded,
alone and inside longer text (the fast path starts at 64 characters)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from arreio.engine.walls.redact import Redactor

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "secrets"
_yaml = YAML(typ="safe")
CASES: list[dict] = [
    case
    for name in ("hostile", "benign", "spellings", "lookalikes")
    for case in _yaml.load((CORPUS / f"{name}.yaml").read_text())
]
ENV = {
    "MY_API_KEY": "sk-test-Zq8vN3xL0pR7tY2wK9mB4cD6",
    "DB_PASSWORD": "hunter2-correct-horse-battery",
    "PGPASSWORD": "pgS3cret-99x",
    "HOME": "/home/dev",
}
FILLER = "The quick brown fox jumps over the lazy dog; nothing to hide in this line at all.\n"


def _plain(redactor: Redactor, text: str) -> str:
    return redactor._pattern.sub(redactor._label, redactor._respelled(text))


def _variants(text: str) -> list[str]:
    encoded = json.dumps(text)[1:-1]
    return [
        text,
        encoded,
        FILLER + text,
        text + "\n" + FILLER,
        FILLER * 3 + encoded + FILLER,
        f'{{"content":"{encoded}"}}' + FILLER,
    ]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_the_fast_scan_equals_the_full_scan(case: dict) -> None:
    redactor = Redactor.from_env(case.get("env") or ENV)
    for text in _variants(case["text"]):
        assert redactor.text(text) == _plain(redactor, text), text


def test_the_fast_scan_really_skips_work_and_still_finds_a_late_secret() -> None:
    redactor = Redactor.from_env({})
    clean = FILLER * 40
    assert redactor.text(clean) is clean  # no lead anywhere: the text comes back as it was
    late = clean + "Authorization: Bearer abcdefghij0123456789abcdefghij\n"
    assert redactor.text(late) == _plain(redactor, late) and "abcdefghij0123456789" not in redactor.text(late)
    env = Redactor.from_env({"MY_API_KEY": "Zq8vN3xL0pR7tY2wK9mB4cD6"})
    assert "Zq8vN3xL0pR7tY2wK9mB4cD6" not in env.text(clean + "key=Zq8vN3xL0pR7tY2wK9mB4cD6 " + clean)


NON_ASCII = "Résumé — what it showed → nothing ✓ to hide here, über-plain text.\n"


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_the_fast_scan_equals_the_full_scan_in_non_ascii_text(case: dict) -> None:
    redactor = Redactor.from_env(case.get("env") or ENV)
    for text in _variants(case["text"]):
        for shaped in (NON_ASCII + text, text + " — " + NON_ASCII, NON_ASCII * 2 + text + "\u017f"):
            assert redactor.text(shaped) == _plain(redactor, shaped), shaped


def test_characters_that_fold_to_ascii_letters_still_find_the_secret() -> None:
    """`ſ`, the Kelvin sign and the two Turkish i match `s`, `k`, `i` case-insensitively: a lead spelled
    with them is invisible to `str.lower`, so such a text takes the plain scan (and is redacted)."""
    redactor = Redactor.from_env({})
    for spelled in (
        "pa\u017f\u017fword = s3cr3t99!x-long-value",
        "Authorization: Bearer \u212a" + "a1" * 15,
        "api_\u212aey = 'zQ9!vN3xL0pR7tY2'",
        "credent\u0131als: 'zQ9!vN3xL0pR7tY2'",
    ):
        text = NON_ASCII + spelled + "\n" + FILLER
        assert redactor.text(text) == _plain(redactor, text)
    text = NON_ASCII + "pa\u017f\u017fword = s3cr3t99!x-long-value\n"
    assert "s3cr3t99!x" in text and "s3cr3t99!x" not in redactor.text(text)


def test_an_environment_value_ending_in_a_capital_sigma_is_found_inside_a_word() -> None:
    """`str.lower` lowers Σ to ς at a word's end and to σ inside one: the value's lead and the text's
    lowered form would disagree, so such text takes the plain scan."""
    value = "KΛΕΙΔΙ-ΜΥΣΤΙΚΟ-9x8y7z6w-ΑΣ"
    redactor = Redactor.from_env({"MY_API_KEY": value})
    text = NON_ASCII + f"the key is {value}Β and more text after it\n" + FILLER
    assert value not in redactor.text(text) and redactor.text(text) == _plain(redactor, text)


def test_the_pattern_is_compiled_at_first_use_once_for_every_labelling() -> None:
    """~20 ms of compiling that a command building a redactor and redacting nothing (`memory show`)
    need not pay; a cassette's labelling shares the pattern, and a forking process compiles it at once."""
    from arreio.engine.walls.redact import CASSETTE

    redactor = Redactor.from_env(ENV)
    cassette = redactor.labelled(CASSETTE)
    assert redactor._combined._compiled is None
    assert cassette.text("key=" + ENV["MY_API_KEY"]) == "key=[redacted:MY_API_KEY]"
    assert redactor._combined._compiled is not None and redactor._pattern is cassette._pattern
    assert Redactor.from_env(ENV).compiled()._combined._compiled is not None


def test_words_are_one_alternative_only_when_their_first_letters_differ() -> None:
    """At most one of them can match at a place: one alternative finds what separate ones found."""
    from arreio.engine.walls.secret_patterns import _one_of

    assert _one_of(["[Pp](?i:ass)", "[Ss](?i:ecret)", "TOKEN"]) == "(?:[Pp](?i:ass)|[Ss](?i:ecret)|TOKEN)"
    with pytest.raises(ValueError, match="same letter"):
        _one_of(["[Pp](?i:ass)", "P(?:WD)"])
