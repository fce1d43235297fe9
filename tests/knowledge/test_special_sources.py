"""What `kb add` meets in a real folder besides text: a FIFO (opening it waited for a writer for
good), a symlink loop (it crashed the command: 'internal error: RuntimeError'), and inputs of which
nothing can be indexed (they left an empty database behind). Real FIFOs, links and databases."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from arreio.engine.core.errors import UsageError
from arreio.memory.knowledge.index import KnowledgeBase
from arreio.memory.knowledge.memory_backend import MemoryBackend
from arreio.memory.knowledge.sources import MAX_FILE_BYTES, expand, read_text
from tests.conftest import fifos_unblocked
from tests.knowledge.conftest import kb_cli

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    (folder / "d").mkdir(parents=True)
    (folder / "d" / "a.md").write_text("The ocelot sleeps in the afternoon.\n")
    return folder


@pytest.fixture
def unblocker(work: Path) -> Iterator[list[Path]]:
    """A read the old code blocked on returns instead of hanging the suite (conftest.fifos_unblocked);
    the FIFOs a reader was found waiting on, for the tests to say none was (not by a time bound)."""
    with fifos_unblocked(work) as opened:
        yield opened


@pytest.fixture
def cli(tmp_path: Path, work: Path, monkeypatch: pytest.MonkeyPatch):
    return kb_cli(monkeypatch, tmp_path, work)


def _indexed(kb: KnowledgeBase) -> list[str]:
    return sorted(Path(d.path).name for d in kb.backend.documents())


def test_a_fifo_in_a_folder_is_passed_over_at_once(work: Path, unblocker) -> None:
    os.mkfifo(work / "d" / "pipe")
    os.symlink("pipe", work / "d" / "link.md")
    kb = KnowledgeBase(MemoryBackend(), None)
    report = kb.add(["d"], work)
    assert unblocker == []  # the old code opened each of them and waited for a writer
    assert _indexed(kb) == ["a.md"] and report.added == 1
    assert not any("pipe" in n or "link.md" in n for n in report.notices)  # in a folder: passed over
    kb.close()


def test_a_fifo_named_on_its_own_is_named_in_a_notice(work: Path, unblocker) -> None:
    os.mkfifo(work / "d" / "pipe")
    files, notices = expand(["d/pipe", "d/a.md"], work)
    assert files == [(work / "d" / "a.md").resolve()]
    assert notices == ["d/pipe: skipped, not a regular file"]


def test_read_text_refuses_a_fifo_without_opening_it(work: Path, unblocker) -> None:
    os.mkfifo(work / "pipe")
    assert read_text(work / "pipe") == f"{work / 'pipe'}: skipped, not a regular file"
    with pytest.raises(OSError):  # ENXIO: no reader has it open
        os.close(os.open(work / "pipe", os.O_WRONLY | os.O_NONBLOCK))


def test_a_symlink_loop_in_a_folder_is_skipped_and_the_rest_indexed(work: Path) -> None:
    os.symlink("l1", work / "d" / "l2")
    os.symlink("l2", work / "d" / "l1")
    os.symlink("nowhere", work / "d" / "broken.md")
    files, notices = expand(["d"], work)
    assert files == [(work / "d" / "a.md").resolve()]
    assert notices == [
        f"{work / 'd' / 'broken.md'}: skipped, cannot read (No such file or directory)",
        f"{work / 'd' / 'l1'}: skipped, a symlink loop",
        f"{work / 'd' / 'l2'}: skipped, a symlink loop",
    ]


def test_a_link_out_of_the_folder_is_not_followed_and_one_inside_is(work: Path, tmp_path: Path) -> None:
    """Regression: `docs/passwd.md -> /etc/passwd` was indexed, and kb_search gave the model what
    read_file refuses. A file link leading out of the folder is passed over, as a folder link is."""
    secret = tmp_path / "home" / ".aws" / "credentials"
    secret.parent.mkdir(parents=True)
    secret.write_text("aws_secret_access_key = not-for-the-index\n")
    os.symlink(secret, work / "d" / "keys.md")
    os.symlink("a.md", work / "d" / "alias.md")  # inside: the same file, indexed once
    files, notices = expand(["d"], work)
    assert files == [(work / "d" / "a.md").resolve()]
    assert notices == [
        (f"{work / 'd' / 'keys.md'}: skipped, a link to a file outside {work / 'd'} (name the file itself to index it)")
    ]
    assert expand(["d/keys.md"], work) == ([secret.resolve()], [])  # named on its own: the person chose it


@pytest.mark.parametrize("make", ["binary", "too-large", "pipe"])
def test_nothing_indexable_fails_before_the_database_is_made(cli, work: Path, tmp_path: Path, make: str) -> None:
    name = {"binary": "bin.dat", "too-large": "huge.log", "pipe": "pipe"}[make]
    if make == "binary":
        (work / name).write_bytes(b"\x89PNG\r\n\x1a\n\0\0")
    elif make == "too-large":
        with open(work / name, "wb") as fh:  # sparse: no 10 MB written
            fh.truncate(MAX_FILE_BYTES + 1)
    else:
        os.mkfifo(work / name)
    result = cli("add", name)
    assert isinstance(result.exception, UsageError) and "nothing to index" in result.exception.message
    assert {"binary": "binary file", "too-large": "larger than 10 MB", "pipe": "not a regular file"}[
        make
    ] in result.output
    assert not (tmp_path / "state" / "knowledge.sqlite").exists()


def test_one_indexable_file_among_others_is_enough(cli, work: Path, tmp_path: Path) -> None:
    (work / "bin.dat").write_bytes(b"\0\0\0")
    result = cli("add", "bin.dat", "d")
    assert result.exit_code == 0, result.output
    assert "added 1, updated 0, unchanged 0 files" in result.output and "bin.dat: skipped, binary file" in result.output
    assert (tmp_path / "state" / "knowledge.sqlite").exists()
