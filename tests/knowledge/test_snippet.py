"""What a hit shows: the part where the query's words are."""

from __future__ import annotations

from arreio.memory.knowledge.snippet import around_match


def test_a_short_text_is_shown_whole() -> None:
    assert around_match("Backups run nightly.", "backups", 100) == "Backups run nightly."


def test_a_long_text_is_shown_around_the_first_match() -> None:
    text = " ".join(f"filler{i}" for i in range(2_000)) + " the platypus lays eggs " + "tail " * 200
    shown = around_match(text, "platypus eggs", 240)
    assert "platypus lays eggs" in shown and shown.startswith("… ") and shown.endswith(" …")
    assert len(shown) <= 240 + 4


def test_cjk_terms_are_found_and_no_match_shows_the_start() -> None:
    text = "前置き。" * 200 + "接続プールの大きさは二十です。" + "後書き。" * 200
    assert "接続プール" in around_match(text, "接続プールの大きさ", 120)
    assert around_match("a" * 500, "zebra", 100).startswith("a" * 100)
