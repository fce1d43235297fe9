"""Japanese in the keyword pass: kana folded as SQLite folds it, NFKC, and word segmentation used
when the `ja` extra is installed (bigrams otherwise), with the index rebuilt when that changes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from arreio.memory.knowledge import cjk, segmenter
from arreio.memory.knowledge.chunking import Chunk
from arreio.memory.knowledge.sqlite_backend import SqliteBackend


def _fts5_terms(text: str) -> list[str]:
    db = sqlite3.connect(":memory:")
    # The index's tokenizer without the porter stemmer, to compare folding alone.
    db.execute("CREATE VIRTUAL TABLE f USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(f, instance)")
    db.execute("INSERT INTO f (body) VALUES (?)", (text,))
    return [row[0] for row in db.execute("SELECT term FROM v ORDER BY offset")]


def test_kana_voicing_marks_are_kept_as_sqlite_keeps_them() -> None:
    assert cjk.tokens(cjk.rewrite("データ", segment=None)) == ["デー", "ータ"]
    kana = "".join(chr(c) for c in range(0x3041, 0x3097)) + "".join(chr(c) for c in range(0x30A1, 0x30FB))
    spaced = " ".join(kana)
    assert cjk.tokens(spaced) == _fts5_terms(spaced)


def test_latin_accents_are_still_folded() -> None:
    assert cjk.tokens("Café NAÏVE") == ["cafe", "naive"] == _fts5_terms("Café NAÏVE")


def test_half_width_katakana_meets_full_width_by_nfkc() -> None:
    assert cjk.query_terms("ﾃﾞｰﾀﾍﾞｰｽ") == cjk.query_terms("データベース")


def test_voiced_kana_query_finds_its_chunk_in_sqlite(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(segmenter.ENV_VAR, "none")
    backend = SqliteBackend(tmp_path / "kb.sqlite")
    backend.replace_document("a.md", "a", 1, [Chunk("バックアップ用のデータベースです。", 1, 1)])
    backend.replace_document("b.md", "b", 1, [Chunk("ハックの記録です。", 1, 1)])
    hits = backend.keyword_search("データベース", 10)
    assert [backend.get_chunks([i])[i].path for i, _ in hits] == ["a.md"]
    backend.close()


def test_without_segmentation_the_analyzer_is_bigrams(monkeypatch) -> None:
    monkeypatch.setenv(segmenter.ENV_VAR, "none")
    assert segmenter.current() == ("cjk-bigrams", None)
    assert cjk.rewrite("ファイルマネージャ").split() == ["ファ", "ァイ", "イル", "ルマ", "マネ", "ネー", "ージ", "ジャ"]


needs_ja = pytest.mark.skipif(
    segmenter._load("auto")[1] is None, reason="the ja extra (fugashi, unidic-lite) is not installed"
)


@needs_ja
def test_japanese_words_are_indexed_beside_bigrams_when_installed(monkeypatch) -> None:
    monkeypatch.delenv(segmenter.ENV_VAR, raising=False)
    name, _ = segmenter.current()
    assert name == "cjk-bigrams+unidic-lite-words"
    terms = cjk.rewrite("グラフィカルなファイルマネージャ").split()
    assert {"ファイル", "マネージャ", "グラフィカル"} <= set(terms)  # words
    assert {"ファ", "ルマ"} <= set(terms)  # and the bigrams, still
    chinese = cjk.rewrite("图形化的文件管理器").split()  # no kana: never cut by a Japanese dictionary
    assert chinese == cjk.rewrite("图形化的文件管理器", segment=None).split()


@needs_ja
def test_sqlite_index_is_rebuilt_when_the_analyzer_changes(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "kb.sqlite"
    monkeypatch.setenv(segmenter.ENV_VAR, "none")
    backend = SqliteBackend(path)
    backend.replace_document("a.md", "a", 1, [Chunk("軽量なファイルマネージャです。", 1, 1)])
    backend.close()

    def vocabulary() -> set[str]:
        db = sqlite3.connect(path)
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.v USING fts5vocab(main, chunks_fts, row)")
        terms = {row[0] for row in db.execute("SELECT term FROM temp.v")}
        stamp = db.execute("SELECT value FROM meta WHERE key = 'fts_analyzer'").fetchone()[0]
        db.close()
        return terms, stamp

    terms, stamp = vocabulary()
    assert "マネージャ" not in terms and stamp == "cjk-bigrams"
    monkeypatch.delenv(segmenter.ENV_VAR)
    backend = SqliteBackend(path)
    assert backend.integrity_ok()
    assert [i for i, _ in backend.keyword_search("マネージャ", 5)]
    backend.close()
    terms, stamp = vocabulary()
    assert "マネージャ" in terms and stamp == "cjk-bigrams+unidic-lite-words"
