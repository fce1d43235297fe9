"""How many git processes a write round costs (each is ~3 ms of a turn, and a turn that
writes a file made nine). Real git, real files: the recorder the run's hook uses, round by round."""

from __future__ import annotations

import shutil
from pathlib import Path

from arreio.engine.checkpoints.index import CheckpointIndex
from arreio.engine.checkpoints.recorder import Recorder
from arreio.engine.checkpoints.store import ShadowRepo
from arreio.engine.providers.testing import FixedClock


def recorder(tmp_path: Path) -> tuple[Recorder, Path]:
    work = tmp_path / "work"
    work.mkdir()
    (work / "keep.txt").write_text("the user's file\n")
    (work / ".gitignore").write_text("build/\n")
    state = work / ".arreio"
    repo = ShadowRepo(state, work, git=shutil.which("git") or "git", max_file_bytes=1 << 20, durable=False)
    return Recorder(repo, CheckpointIndex(state, durable=False), FixedClock(), run_id="run-1"), work


def a_round(rec: Recorder, work: Path, rel: str, text: str, step: int) -> tuple[int, int, dict]:
    """A file tool's round writing `rel`: the before checkpoint, the write, the after checkpoint.
    Returns the git processes of each checkpoint, and what the after one left out."""
    start = rec.repo.calls
    before = rec.checkpoint("before", step=step, watch=[rel])
    between = rec.repo.calls
    (work / rel).parent.mkdir(parents=True, exist_ok=True)
    (work / rel).write_text(text)
    after = rec.checkpoint("after", step=step, watch=[rel], before=before, calls=[{"id": "c", "name": "write_file"}])
    assert after is not None
    return between - start, rec.repo.calls - between, after.skipped


def test_a_round_writing_a_new_file_asks_git_only_what_it_must(tmp_path: Path) -> None:
    rec, work = recorder(tmp_path)
    rec.checkpoint("before", step=0)  # the run's first: the store is made, the whole tree added
    # A new file: the before checkpoint lists the tree (nothing changed: its tree is known); the after
    # one lists, adds, writes the tree, commits, points the run's ref, and diffs for the index line.
    assert a_round(rec, work, "src/new.py", "x = 1\n", 1)[:2] == (1, 6)
    # Writing it again: the index holds it (the snapshot added it), so git is not asked about it.
    assert a_round(rec, work, "src/new.py", "x = 2\n", 2)[:2] == (1, 6)
    # The same file unchanged on disk at the next before: still one listing, nothing else.
    before = rec.repo.calls
    rec.checkpoint("before", step=3, watch=["src/new.py"])
    assert rec.repo.calls - before == 1


def test_an_ignored_file_is_still_named_and_a_tracked_one_is_not(tmp_path: Path) -> None:
    rec, work = recorder(tmp_path)
    rec.checkpoint("before", step=0)
    *_, skipped = a_round(rec, work, "build/out.txt", "made\n", 1)
    assert list(skipped) == ["build/out.txt"] and skipped["build/out.txt"][2] == "ignored by .gitignore"
    *_, skipped = a_round(rec, work, "keep.txt", "changed\n", 2)
    assert "keep.txt" not in skipped
    # The user's file, changed by the round, is in the checkpoint (undo can restore it).
    show = rec.repo.run_git("ls-tree", "-r", "--name-only", rec.last.tree).decode().split()
    assert "keep.txt" in show and "build/out.txt" not in show
