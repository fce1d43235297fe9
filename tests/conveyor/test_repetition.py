"""A reply that repeats itself is recognised (a closed set); honest replies that repeat a shape are not."""

from __future__ import annotations

import pytest

from arreio.engine.loop.repetition import Repetition, repeated_end

HONEST = {
    "table": "| name | size |\n|---|---|\n" + "".join(f"| file_{i}.py | {i * 37} |\n" for i in range(200)),
    "code": "".join(f"    assert parse({i}) == {i * i}\n" for i in range(150)),
    "list": "\n".join(f"{i}. Step {i}: run the tests again and read the output." for i in range(1, 120)),
    "prose": " ".join(f"Sentence number {i} says something new about the module." for i in range(120)),
    "numbers": ", ".join(str(i) for i in range(1500)),
}


@pytest.mark.parametrize("name", list(HONEST))
def test_honest_replies_are_not_loops(name: str) -> None:
    watch = Repetition()
    text = HONEST[name]
    assert all(watch.feed(text[i : i + 40]) is None for i in range(0, len(text), 40))


@pytest.mark.parametrize(
    "unit", ["The answer is 42. ", "ok\n", "=", "I will now read the file again to check it.\n" * 3]
)
def test_a_reply_written_over_and_over_is_a_loop(unit: str) -> None:
    watch = Repetition()
    said = None
    for _ in range(4000):
        said = watch.feed(unit)
        if said:
            break
    assert said and "repeated itself" in said and "step failed" in said


def test_the_period_and_count_are_measured() -> None:
    assert repeated_end("intro. " + "abc" * 600) == (3, 600)
    assert repeated_end("abc" * 100) is None  # too short to say
