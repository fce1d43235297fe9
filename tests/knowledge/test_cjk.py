from __future__ import annotations

from arreio.memory.knowledge import cjk


def test_cjk_runs_become_overlapping_bigrams() -> None:
    assert cjk.rewrite("日本語", segment=None).split() == ["日本", "本語"]
    assert cjk.rewrite("検索").split() == ["検索"]
    assert cjk.rewrite("字").split() == ["字"]


def test_mixed_text_keeps_latin_words_and_splits_runs_at_punctuation() -> None:
    assert cjk.rewrite("ncursesを使用、ゲーム", segment=None).split() == [
        "ncurses",
        "を使",
        "使用",
        "、",
        "ゲー",
        "ーム",
    ]


def test_full_width_ascii_is_normalised() -> None:
    assert cjk.tokens(cjk.rewrite("ＳＱＬｉｔｅ")) == ["sqlite"]


def test_fts_match_quotes_every_term_so_user_text_is_never_syntax() -> None:
    assert cjk.fts_match('NEAR "x" OR y*') == '"near" OR "x" OR "or" OR "y"'
    assert cjk.fts_match("   ...  ") is None


def test_query_terms_are_distinct_and_bounded() -> None:
    assert cjk.query_terms("a a b A") == ["a", "b"]
    assert len(cjk.query_terms(" ".join(f"w{i}" for i in range(500)))) == cjk.MAX_QUERY_TERMS


def test_is_cjk() -> None:
    assert cjk.is_cjk("漢") and cjk.is_cjk("か") and cjk.is_cjk("カ") and not cjk.is_cjk("a")


def test_soft_wraps_inside_cjk_words_are_joined() -> None:
    wrapped = "バックグラウンドプ\nロセスです。\n\n次の段落\n  続き\nend\n英語"
    assert cjk.unwrap(wrapped) == "バックグラウンドプロセスです。\n\n次の段落続き\nend\n英語"
    assert "プロ" in cjk.rewrite("バックグラウンドプ\nロセス", segment=None).split()
    assert cjk.unwrap("one\ntwo") == "one\ntwo"
