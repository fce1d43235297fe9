"""Incremental indexing, sync, remove, and what an interruption leaves behind."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from arreio.memory.knowledge import embedding
from arreio.memory.knowledge.embedders import NO_EMBEDDER_NOTICE
from arreio.memory.knowledge.index import KnowledgeBase
from arreio.memory.knowledge.sqlite_backend import SqliteBackend
from tests.knowledge.conftest import FIXTURES, CountingEmbedder


def test_add_indexes_text_and_skips_binary_with_a_notice(backend, docs: Path) -> None:
    shutil.copy(FIXTURES / "binary" / "pixel.png", docs / "pixel.png")
    kb = KnowledgeBase(backend, CountingEmbedder())
    report = kb.add(["."], docs)
    assert (report.added, report.updated, report.unchanged) == (5, 0, 0)
    assert report.chunks == backend.stats().chunks == report.embedded
    assert any("pixel.png" in n and "binary" in n for n in report.notices)
    assert {Path(d.path).name for d in backend.documents()} == {
        "gardening.md",
        "sqlite.md",
        "japanese.md",
        "chinese.md",
        "retry.py",
    }


def test_second_add_skips_unchanged_and_reindexes_changed(backend, docs: Path) -> None:
    embedder = CountingEmbedder()
    kb = KnowledgeBase(backend, embedder)
    kb.add(["."], docs)
    first_embedded = len(embedder.embedded)

    again = kb.add(["."], docs)
    assert (again.added, again.updated, again.unchanged, again.embedded) == (0, 0, 5, 0)
    assert len(embedder.embedded) == first_embedded  # nothing embedded twice

    (docs / "sqlite.md").write_text("# SQLite\n\nVACUUM rebuilds the database file compactly.\n")
    changed = kb.add(["."], docs)
    assert (changed.added, changed.updated, changed.unchanged) == (0, 1, 4)
    assert embedder.embedded[first_embedded:] == ["# SQLite\n\nVACUUM rebuilds the database file compactly."]
    assert kb.search("VACUUM", k=1, mode="keyword")[0].path.endswith("sqlite.md")
    assert kb.search("write-ahead", k=5, mode="keyword") == []  # the old text is gone


def test_globs_and_single_files(backend, docs: Path) -> None:
    kb = KnowledgeBase(backend, None)
    report = kb.add(["notes/*.md", "retry.py", "missing.txt"], docs)
    assert report.added == 3
    assert "missing.txt: no such file or folder" in report.notices
    assert NO_EMBEDDER_NOTICE in report.notices  # said once, keyword-only
    assert report.notices.count(NO_EMBEDDER_NOTICE) == 1


def test_sync_drops_removed_and_reindexes_changed(backend, docs: Path) -> None:
    kb = KnowledgeBase(backend, CountingEmbedder())
    kb.add(["."], docs)
    (docs / "gardening.md").unlink()
    (docs / "retry.py").write_text("def retry_forever():\n    pass\n")
    report = kb.sync()
    assert (report.removed, report.updated, report.unchanged) == (1, 1, 3)
    assert report.pending == 0
    assert not any(d.path.endswith("gardening.md") for d in backend.documents())
    assert kb.search("retry_forever", k=1)[0].path.endswith("retry.py")


def test_remove_a_file_or_a_folder(backend, docs: Path) -> None:
    kb = KnowledgeBase(backend, None)
    kb.add(["."], docs)
    assert [Path(p).name for p in kb.remove("notes", docs)] == ["chinese.md", "japanese.md"]
    assert [Path(p).name for p in kb.remove("retry.py", docs)] == ["retry.py"]
    assert kb.remove("retry.py", docs) == []
    assert backend.stats().documents == 2


def test_interrupted_embedding_leaves_a_usable_index_and_resumes(tmp_path: Path, docs: Path) -> None:
    db = tmp_path / "state" / "knowledge.sqlite"
    # One chunk per model call (embed_chars=1): the fifth call fails, after two whole batches of two were stored.
    kb = KnowledgeBase(SqliteBackend(db), CountingEmbedder(fail_on_batch=5), batch_size=2, embed_chars=1)
    with pytest.raises(KeyboardInterrupt):
        kb.add(["."], docs)
    done_before = kb.backend.stats()
    kb.close()
    assert done_before.vectors == 4 and done_before.chunks > 4  # two whole batches landed

    # Reopened: consistent, every document searchable by keyword already.
    resumed = KnowledgeBase(SqliteBackend(db), CountingEmbedder(), batch_size=2)
    assert resumed.backend.integrity_ok()
    assert resumed.search("长城", k=1)[0].path.endswith("chinese.md")
    missing = resumed.backend.pending_vectors(100)
    report = resumed.add(["."], docs)
    assert report.unchanged == 5 and report.added == report.updated == 0
    assert report.embedded == done_before.chunks - 4 and report.pending == 0
    # Only the missing chunks were embedded again: each one, followed by its sentences.
    expected = [text for chunk_id, raw in missing for text in embedding.plan(chunk_id, raw, True).texts]
    assert resumed.embedder.embedded == expected
    assert resumed.search("aphids", k=1)[0].path.endswith("gardening.md")
    resumed.close()


def test_an_interrupted_call_of_several_chunks_loses_only_that_call(tmp_path: Path, docs: Path) -> None:
    """Model calls of several chunks each (the default): a Ctrl-C in the second call leaves what the
    first call's chunks filled (whole store batches), and the next add embeds exactly the rest."""
    db = tmp_path / "state" / "knowledge.sqlite"
    kb = KnowledgeBase(SqliteBackend(db), CountingEmbedder(fail_on_batch=2), batch_size=1, embed_chars=2_000)
    with pytest.raises(KeyboardInterrupt):
        kb.add(["."], docs)
    first_call = kb.embedder.embedded
    stored = kb.backend.stats()
    kb.close()
    assert 2 <= stored.vectors < stored.chunks  # the first call held two chunks or more, all stored
    resumed = KnowledgeBase(SqliteBackend(db), CountingEmbedder(), batch_size=1, embed_chars=2_000)
    missing = resumed.backend.pending_vectors(100)
    assert len(missing) == stored.chunks - stored.vectors
    report = resumed.add(["."], docs)
    assert report.embedded == len(missing) and report.pending == 0
    assert not set(resumed.embedder.embedded) & set(first_call)  # nothing embedded twice
    resumed.close()


_KILL_SCRIPT = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from arreio.memory.knowledge.embedders import HashingEmbedder
    from arreio.memory.knowledge.index import KnowledgeBase
    from arreio.memory.knowledge.sqlite_backend import SqliteBackend

    class DiesMidway(HashingEmbedder):
        calls = 0
        def embed_passages(self, texts):
            DiesMidway.calls += 1
            if DiesMidway.calls == 5:  # one chunk per call: two batches of two are stored
                os.kill(os.getpid(), signal.SIGKILL)  # no cleanup, no finally: a real crash
            return super().embed_passages(texts)

    kb = KnowledgeBase(SqliteBackend(Path(sys.argv[1])), DiesMidway(), batch_size=2, embed_chars=1)
    kb.add(["."], Path(sys.argv[2]))
    """
)


@pytest.mark.slow
def test_killed_kb_add_leaves_a_usable_index(tmp_path: Path, docs: Path) -> None:
    db = tmp_path / "state" / "knowledge.sqlite"
    script = tmp_path / "kill_add.py"
    script.write_text(_KILL_SCRIPT)
    proc = subprocess.run([sys.executable, str(script), str(db), str(docs)], capture_output=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()

    kb = KnowledgeBase(SqliteBackend(db), CountingEmbedder(), batch_size=2)
    assert kb.backend.integrity_ok()
    stats = kb.backend.stats()
    # Embedding runs a chunk or two ahead of storing, so the batch in hand at the crash may be
    # lost; what landed is whole batches, at least the first.
    assert stats.documents == 5 and stats.vectors in (2, 4)
    assert kb.search("FTS5 bm25", k=1)[0].path.endswith("sqlite.md")
    report = kb.add(["."], docs)
    assert report.unchanged == 5 and report.pending == 0
    assert kb.backend.stats().vectors == stats.chunks
    kb.close()


def test_switching_embedder_reembeds_everything(tmp_path: Path, docs: Path) -> None:
    class OtherModel(CountingEmbedder):
        def __init__(self) -> None:
            super().__init__()
            self.name = "other-model"

    kb = KnowledgeBase(SqliteBackend(tmp_path / "k.sqlite"), CountingEmbedder())
    kb.add(["."], docs)
    chunks = kb.backend.stats().chunks
    kb.embedder = OtherModel()
    assert not kb.vectors_ready()
    assert kb.stats().notice and "kb sync" in kb.stats().notice
    assert kb.search("compost", k=1)[0].path.endswith("gardening.md")  # keyword still answers
    assert kb.sync().embedded == chunks
    assert kb.vectors_ready() and kb.backend.vector_model() == "other-model+sentences"
    kb.close()


def test_search_edge_cases(sqlite_kb: KnowledgeBase, docs: Path) -> None:
    sqlite_kb.add(["."], docs)
    assert sqlite_kb.search("   ") == []
    assert sqlite_kb.search("compost", k=0) == []
    # FTS5 syntax in a query is just text: no error, and the words still match.
    assert sqlite_kb.search('"compost AND (', k=3, mode="keyword")[0].path.endswith("gardening.md")
    hits = sqlite_kb.search("compost", k=3)
    assert len({(h.path, h.start_line) for h in hits}) == len(hits)  # deduped
    assert all(0 < h.score <= 1 for h in hits)
