"""What checkpoints capture and what they never touch: the state folder, the user's own `.git`, files
over the size cap (listed, never silently); without git a run still succeeds, with one warning;
config is validated; `checkpoints list` and `prune`, by hand and from config."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.checkpoints.conftest import scripted, tree_state

WRITE = """\
- text: "Writing."
  tool_calls:
    - {name: write_file, arguments: {path: out.txt, content: "%s\\n"}}
- text: "Done."
"""


def shadow_paths(state: Path, work: Path) -> set[str]:
    """Every path in every checkpointed tree, read from the shadow repository itself."""
    env = {"GIT_DIR": str(state / "checkpoints" / "git"), "PATH": os.environ["PATH"], "HOME": str(state)}
    index = [json.loads(x) for x in (state / "checkpoints" / "index.jsonl").read_text().splitlines()]
    paths: set[str] = set()
    for tree in {r["tree"] for r in index if r["type"] == "checkpoint"}:
        out = subprocess.run(
            ["git", "ls-tree", "-r", "--name-only", tree], env=env, capture_output=True, text=True, check=True, cwd=work
        )
        paths.update(out.stdout.splitlines())
    return paths


def folder_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        h.update(str(path.relative_to(folder)).encode())
        if path.is_file():
            h.update(path.read_bytes())
    return h.hexdigest()


def test_the_state_folder_and_the_users_git_are_never_snapshotted_nor_touched(work: Path, cli) -> None:
    git = ["git", "-c", "user.name=T", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    (work / "tracked.txt").write_text("v1\n")
    subprocess.run([*git, "add", "tracked.txt"], cwd=work, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first"], cwd=work, check=True)
    (work / "tracked.txt").write_text("v2 (uncommitted)\n")
    user_git = folder_digest(work / ".git")
    before = tree_state(work)
    result, _, _ = scripted(cli, work, WRITE % "written")
    assert result.exit_code == 0, result.output
    paths = shadow_paths(work / ".arreio", work)
    assert "out.txt" in paths and "tracked.txt" in paths
    assert not [p for p in paths if p.startswith((".arreio/", ".git/"))]
    assert cli("undo", "--yes").exit_code == 0
    assert tree_state(work) == before and folder_digest(work / ".git") == user_git  # their history, untouched


def test_a_state_folder_inside_the_tree_elsewhere_is_excluded_too(work: Path, cli, monkeypatch) -> None:
    monkeypatch.setenv("ARREIO_HOME", str(work / "state"))
    result, _, _ = scripted(cli, work, WRITE % "x")
    assert result.exit_code == 0, result.output
    paths = shadow_paths(work / "state", work)
    assert "out.txt" in paths and not [p for p in paths if p.startswith(("state/", ".arreio/"))]


def test_a_file_over_the_size_cap_is_listed_never_silently_dropped(work: Path, cli) -> None:
    (work / ".arreio").mkdir()
    (work / ".arreio" / "config.yaml").write_text("checkpoints: {max_file_mb: 0.001}\n")  # ~1 KB
    script = """\
- text: "Writing."
  tool_calls:
    - {name: write_file, arguments: {path: big.txt, content: "%s"}}
    - {name: write_file, arguments: {path: small.txt, content: "small\\n"}}
- text: "Done."
""" % ("x" * 3000)
    result, events, report = scripted(cli, work, script)
    assert result.exit_code == 0, result.output
    assert report["checkpoint_skipped"] == ["big.txt"] and report["changes"]["created"] == ["small.txt"]
    said = [e for e in events if e["type"] == "warning" and e.get("code", "").startswith("checkpoints")]
    # made by the run, so a note (undo leaves it), not a warning that something the user had is at stake
    assert [e["code"] for e in said] == ["checkpoints_new_skipped"]
    assert said[0]["message"].startswith("undo will not remove big.txt (") and "max_file_mb" in said[0]["message"]
    assert any("big.txt" in w for w in report["warnings"])
    plan = cli("undo", "--yes")
    assert plan.exit_code == 0 and "not checkpointed, left as they are: big.txt" in plan.stdout
    assert not (work / "small.txt").exists() and (work / "big.txt").exists()


def test_without_git_a_run_succeeds_with_one_warning(work: Path, cli, monkeypatch, tmp_path: Path) -> None:
    empty = tmp_path / "no-git-here"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    script = WRITE.replace(
        '- text: "Done."',
        """- text: "Again."
  tool_calls:
    - {name: write_file, arguments: {path: two.txt, content: "2"}}
- text: "Done.\"""",
    )
    result, events, report = scripted(cli, work, script % "no git")
    assert result.exit_code == 0, result.output
    warned = [e for e in events if e["type"] == "warning" and e.get("code") == "checkpoints"]
    assert len(warned) == 1 and "git is not installed" in warned[0]["message"]
    assert sum("git is not installed" in w for w in report["warnings"]) == 1
    assert events[-1]["changes"] is None and report["changes"] is None
    assert (work / "out.txt").read_text() == "no git\n" and not (work / ".arreio" / "checkpoints").exists()
    missing = cli("undo", "--yes")
    assert missing.exit_code == 2 and "git is not installed" in missing.stderr


def test_checkpoints_can_be_switched_off_and_a_typo_is_named(work: Path, cli) -> None:
    (work / ".arreio").mkdir()
    config = work / ".arreio" / "config.yaml"
    config.write_text("checkpoints: {enabled: false}\n")
    result, events, _ = scripted(cli, work, WRITE % "off")
    assert result.exit_code == 0 and events[-1]["changes"] is None
    assert not (work / ".arreio" / "checkpoints").exists()
    config.write_text("checkpoints: {keep_dayz: 3}\n")
    bad, _, _ = scripted(cli, work, WRITE % "typo")
    assert bad.exit_code == 5 and "checkpoints.keep_dayz" in bad.stderr and "checkpoints.keep_days" in bad.stderr


def test_list_filters_by_session_and_prune_keeps_the_newest_run(work: Path, cli) -> None:
    first, _, r1 = scripted(cli, work, WRITE % "one")
    second, _, r2 = scripted(cli, work, WRITE % "two")
    assert first.exit_code == second.exit_code == 0
    listed = json.loads(cli("checkpoints", "list", "--json").stdout)
    assert [e["id"] for e in listed] == [r1["run_id"], r2["run_id"]]
    assert listed[0]["changes"] == {"created": ["out.txt"], "modified": [], "deleted": []}
    only = json.loads(
        cli("checkpoints", "list", "--session", r1["session_id"], "--json").stdout
    )  # (a prefix may match both)
    assert [e["id"] for e in only] == [r1["run_id"]]
    table = cli("checkpoints", "list").stdout
    assert r1["run_id"] in table and "+0 ~1 -0" in table
    assert cli("checkpoints", "prune", "--older-than", "soon").exit_code == 2

    pruned = cli("checkpoints", "prune", "--older-than", "0s", "--json", "--yes")
    assert pruned.exit_code == 0, pruned.output
    assert json.loads(pruned.stdout)["removed"] == [r1["run_id"]]
    assert [e["id"] for e in json.loads(cli("checkpoints", "list", "--json").stdout)] == [r2["run_id"]]
    assert cli("undo", "--yes").exit_code == 0 and (work / "out.txt").read_text() == "one\n"  # still whole
    assert cli("diff", "--run", r1["run_id"]).exit_code == 2


def test_old_runs_are_pruned_automatically_by_age_and_by_size(work: Path, cli) -> None:
    (work / ".arreio").mkdir()
    config = work / ".arreio" / "config.yaml"
    config.write_text("checkpoints: {keep_days: 0.00001}\n")  # under a second
    r1 = scripted(cli, work, WRITE % "one")[2]
    time.sleep(1.1)
    r2 = scripted(cli, work, WRITE % "two")[2]
    assert [e["id"] for e in json.loads(cli("checkpoints", "list", "--json").stdout)] == [r2["run_id"]]
    assert r1["run_id"] != r2["run_id"]

    config.write_text("checkpoints: {max_total_mb: 0.0001}\n")  # 100 bytes: only the newest survives
    r3 = scripted(cli, work, WRITE % "three")[2]
    assert [e["id"] for e in json.loads(cli("checkpoints", "list", "--json").stdout)] == [r3["run_id"]]
    assert cli("undo", "--yes").exit_code == 0 and (work / "out.txt").read_text() == "two\n"


@pytest.mark.slow
def test_help_and_listing_do_not_import_sdks(tmp_path: Path) -> None:
    from tests.cli.test_lazy_imports import HEAVY, PROBE

    commands = [["diff", "--help"], ["undo", "--help"], ["checkpoints", "--help"], ["checkpoints", "list"]]
    code = PROBE.format(commands=commands, heavy=HEAVY)
    out = subprocess.run(
        [os.sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
