"""Knowledge-base test wiring: fixture documents copied to a temp folder, both backends, and a
hashing embedder (deterministic, no model needed)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from arreio.memory.knowledge.embedders import HashingEmbedder
from arreio.memory.knowledge.index import KnowledgeBase
from arreio.memory.knowledge.memory_backend import MemoryBackend
from arreio.memory.knowledge.sqlite_backend import SqliteBackend

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "knowledge"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    target = tmp_path / "docs"
    shutil.copytree(FIXTURES / "docs", target)
    return target


def make_backend(kind: str, tmp_path: Path):
    return MemoryBackend() if kind == "memory" else SqliteBackend(tmp_path / "state" / "knowledge.sqlite")


@pytest.fixture(params=["memory", "sqlite"])
def backend(request, tmp_path: Path):
    made = make_backend(request.param, tmp_path)
    yield made
    made.close()


@pytest.fixture
def sqlite_kb(tmp_path: Path):
    kb = KnowledgeBase(SqliteBackend(tmp_path / "state" / "knowledge.sqlite"), HashingEmbedder(), batch_size=2)
    yield kb
    kb.close()


class CountingEmbedder(HashingEmbedder):
    """Hashing embedder that counts the passages it embedded, and can be told to fail (as Ctrl-C
    would) when it reaches a given batch."""

    def __init__(self, fail_on_batch: int | None = None) -> None:
        super().__init__()
        self.embedded: list[str] = []
        self.batches = 0
        self.fail_on_batch = fail_on_batch

    def embed_passages(self, texts):
        self.batches += 1
        if self.fail_on_batch is not None and self.batches == self.fail_on_batch:
            raise KeyboardInterrupt
        self.embedded.extend(texts)
        return super().embed_passages(texts)


def kb_cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, work: Path, embedder: str = "none"):
    """`arreio kb ARGS` in-process (typer's CliRunner) with `work` as the working directory, HOME and the
    state directory under `tmp_path`, and `$ARREIO_KB_EMBEDDER` set to `embedder`: `invoke(*args)`."""
    import typer
    from typer.testing import CliRunner

    from arreio.cli.commands import kb as kb_cmd
    from tests.conftest import isolate

    isolate(monkeypatch, tmp_path / "home", work)
    monkeypatch.setenv("ARREIO_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("ARREIO_KB_EMBEDDER", embedder)
    root = typer.Typer()
    root.add_typer(kb_cmd.app, name="kb")
    runner = CliRunner()
    return lambda *args: runner.invoke(root, ["kb", *args])
