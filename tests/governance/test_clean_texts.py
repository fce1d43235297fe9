"""A text the redactor found clean is not scanned again (a tool result is redacted on its
way into the history and again when pruning saves it). Remembered by identity, bounded, and never
for a text that held a secret."""

from __future__ import annotations

from arreio.engine.walls.clean_texts import CleanTexts
from arreio.engine.walls.redact import CASSETTE, Redactor

SECRET = "Zq8vN3xL0pR7tY2wK9mB4cD6"
PLAIN = "def handler(event):\n    return event['value'] * 2\n" * 20  # ~1 KB, nothing secret


def test_a_clean_text_is_remembered_and_comes_back_unchanged() -> None:
    redactor = Redactor({"MY_API_KEY": SECRET})
    text = "".join([PLAIN])  # an object of its own
    assert redactor.text(text) is text and redactor._clean.holds(text)
    assert redactor.text(text) is text  # served as remembered
    twin = (PLAIN + ".")[:-1]  # equal, another object: scanned on its own (identity, not value)
    assert twin == text and twin is not text and not redactor._clean.holds(twin)
    assert redactor.text(twin) == text


def test_a_text_with_a_secret_is_never_remembered() -> None:
    redactor = Redactor({"MY_API_KEY": SECRET})
    leaky = PLAIN + f"key = {SECRET}\n" + PLAIN
    first = redactor.text(leaky)
    assert SECRET not in first and "[REDACTED:MY_API_KEY]" in first
    assert not redactor._clean.holds(leaky)
    assert redactor.text(leaky) == first  # scanned again, the same answer
    token = PLAIN + "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8" + "\n"
    assert "ghp_a1B2" not in redactor.text(token) and not redactor._clean.holds(token)


def test_what_one_redactor_found_clean_another_is_not_told() -> None:
    """Another redactor may hide other values: its own memory, except a relabelled copy of the same."""
    text = "".join([PLAIN, f"the value {SECRET} in a plain line\n"])
    assert Redactor({}).text(text) is text  # no secrets known: clean to this one
    other = Redactor({"MY_API_KEY": SECRET})
    assert SECRET not in other.text(text)
    clean = "".join([PLAIN])
    other.text(clean)
    assert other.labelled(CASSETTE)._clean.holds(clean)


def test_the_memory_is_bounded_and_forgets_the_oldest() -> None:
    memory = CleanTexts(max_chars=3_000, min_chars=100)
    texts = ["".join([str(i), "x" * 999]) for i in range(5)]
    short = "y" * 50
    for text in [*texts, short]:
        memory.add(text)
    assert len(memory) == 3 and not memory.holds(short)
    assert [memory.holds(t) for t in texts] == [False, False, True, True, True]


def test_short_texts_are_remembered_by_value_per_label_set_and_bounded() -> None:
    """Ids, names and digests come back every turn; their redacted form is remembered (a
    secret short enough to fit is still hidden every time, in each labelling's own words)."""
    from arreio.engine.walls import redact

    short = "k8Vq3ZpL0wX7"
    journal = Redactor({"TINY_TOKEN": short})
    cassette = journal.labelled(CASSETTE)
    for _ in range(3):
        assert journal.text(f"t={short}") == "t=[REDACTED:TINY_TOKEN]"
        assert cassette.text(f"t={short}") == "t=[redacted:TINY_TOKEN]"
        assert journal.text("call_1_0") == "call_1_0"
    for i in range(redact._SHORT_KEPT + 10):  # never more than the bound
        journal.text(f"id-{i}")
    assert len(journal._short) <= redact._SHORT_KEPT and journal.text(f"t={short}") == "t=[REDACTED:TINY_TOKEN]"
