"""A file tool that writes a file `.gitignore` keeps out of the checkpoints (`.env`, `build/…`) is said
at once and in the report: undo cannot restore it. Before, the run said "changed 1 file" and undo
restored only that one; the overwritten `.env` was gone without a word. A file the run made there
(the quickstart's `build/…`) risks nothing the user had: it is one quiet note a run, not a warning.
Real files, real git, scripted runs through the real CLI (and a real terminal for how it reads)."""

from __future__ import annotations

from pathlib import Path

from tests.checkpoints.conftest import scripted

NOT_CHECKPOINTED = "not checkpointed, so `arreio undo` cannot restore them"
UNDO_LEAVES = "undo will not remove "

OVERWRITES = """\
- tool_calls:
  - {name: write_file, arguments: {path: .env, content: "EMPTY=1\\n"}}
  - {name: write_file, arguments: {path: build/data.txt, content: "gone\\n"}}
  - {name: write_file, arguments: {path: a.txt, content: "changed\\n"}}
- tool_calls:
  - {name: write_file, arguments: {path: build/new.txt, content: "made\\n"}}
- text: done
"""


def seed(work: Path) -> None:
    (work / ".gitignore").write_text(".env\nbuild/\n")
    (work / ".env").write_text("DB_PASSWORD=hunter2\n")
    (work / "build").mkdir()
    (work / "build" / "data.txt").write_text("important\n")
    (work / "a.txt").write_text("hi\n")


def warnings_of(events: list[dict]) -> list[str]:
    return [e["message"] for e in events if e["type"] == "warning"]


def test_ignored_files_a_file_tool_writes_are_named(work: Path, cli) -> None:
    seed(work)
    result, events, report = scripted(cli, work, OVERWRITES)
    assert result.exit_code == 0, result.stdout
    assert report["changes"]["modified"] == ["a.txt"]  # what the checkpoints hold, as before
    assert sorted(report["checkpoint_skipped"]) == [".env", "build/data.txt", "build/new.txt"]
    said = [w for w in warnings_of(events) if NOT_CHECKPOINTED in w]
    assert len(said) == 1  # at once, after the round that overwrote what the user had
    assert ".env (ignored by .gitignore)" in said[0] and "build/data.txt" in said[0]
    assert "build/new.txt" not in said[0]
    noted = [e for e in events if e["type"] == "warning" and UNDO_LEAVES in e["message"]]
    assert [(e["code"], e["message"]) for e in noted] == [
        ("checkpoints_new_skipped", "undo will not remove build/new.txt (ignored by .gitignore)")
    ]


def test_checkpointed_writes_and_ignored_reads_say_nothing(work: Path, cli) -> None:
    seed(work)
    script = """\
- tool_calls:
  - {name: read_file, arguments: {path: .env}}
  - {name: write_file, arguments: {path: a.txt, content: "changed\\n"}}
  - {name: write_file, arguments: {path: src/new.py, content: "x = 1\\n"}}
- text: done
"""
    result, events, report = scripted(cli, work, script)
    assert result.exit_code == 0, result.stdout
    assert report["checkpoint_skipped"] == []
    assert not [w for w in warnings_of(events) if NOT_CHECKPOINTED in w or UNDO_LEAVES in w]
    assert sorted(report["changes"]["created"]) == ["src/new.py"]


def test_undo_still_restores_what_the_checkpoints_hold(work: Path, cli) -> None:
    seed(work)
    assert scripted(cli, work, OVERWRITES)[0].exit_code == 0
    undone = cli("undo", "--yes")
    assert undone.exit_code == 0, undone.stdout
    assert (work / "a.txt").read_text() == "hi\n"
    assert (work / ".env").read_text() == "EMPTY=1\n"  # as the warning said: not restored


def test_a_run_whose_only_change_is_an_ignored_new_file_says_so_and_undo_does_not_deny_it(work: Path, cli) -> None:
    """Regression: a run that made only `secret.md` (ignored) said nothing, reported no skipped
    file, and `undo` answered "the files … changed are already as before". The tree did not change,
    so the run's one checkpoint was reused — and its list of files left out was overwritten with the
    new one, so the first and last looked alike."""
    (work / ".gitignore").write_text("secret.md\n")
    only_ignored = """\
- tool_calls:
  - {name: write_file, arguments: {path: secret.md, content: "made\\n"}}
- text: done
"""
    result, events, report = scripted(cli, work, only_ignored)
    assert result.exit_code == 0, result.stdout
    assert report["checkpoint_skipped"] == ["secret.md"]
    assert "undo will not remove secret.md (ignored by .gitignore)" in warnings_of(events)
    undo = cli("undo", "--dry-run")
    assert undo.exit_code == 0 and "already as before" not in undo.stdout
    assert "was not checkpointed, so it is left as it is: secret.md" in undo.stdout
    assert (work / "secret.md").read_text() == "made\n"


def test_a_refused_write_into_git_is_not_called_ignored_nor_denied_by_refused(work: Path, cli) -> None:
    """Regression: after `write_file .git/config` was refused, a warning said .git/config was 'not
    checkpointed … (ignored by .gitignore)' (nothing was written, and no .gitignore names it), and the
    refusal read 'denied by refused: .git/ is …'."""
    (work / ".git").mkdir()
    (work / ".git" / "config").write_text("[core]\n")
    script = """\
- tool_calls:
  - {name: write_file, arguments: {path: ok.txt, content: "x\\n"}}
  - {name: write_file, arguments: {path: .git/config, content: "x\\n"}}
- text: done
"""
    result, events, report = scripted(cli, work, script)
    assert result.exit_code == 0, result.stdout
    assert not [w for w in warnings_of(events) if NOT_CHECKPOINTED in w or UNDO_LEAVES in w]
    assert report["checkpoint_skipped"] == []
    refused = [e for e in events if e["type"] == "tool_end" and e.get("is_error")]
    assert len(refused) == 1 and refused[0]["preview"].startswith("refused: .git/ is version control")
    assert (work / ".git" / "config").read_text() == "[core]\n"


def test_build_outputs_made_round_after_round_are_noted_once(work: Path, cli) -> None:
    """A run that writes its outputs into an ignored `build/` over several rounds says so once, with
    the first of them; the report still lists every one."""
    (work / ".gitignore").write_text("build/\n")
    script = """\
- tool_calls:
  - {name: write_file, arguments: {path: build/one.txt, content: "1\\n"}}
  - {name: write_file, arguments: {path: build/two.txt, content: "2\\n"}}
- tool_calls:
  - {name: write_file, arguments: {path: build/three.txt, content: "3\\n"}}
- tool_calls:
  - {name: write_file, arguments: {path: build/four.txt, content: "4\\n"}}
- text: done
"""
    result, events, report = scripted(cli, work, script)
    assert result.exit_code == 0, result.stdout
    assert sorted(report["checkpoint_skipped"]) == [
        "build/four.txt",
        "build/one.txt",
        "build/three.txt",
        "build/two.txt",
    ]
    assert [w for w in warnings_of(events) if "build/" in w] == [
        "undo will not remove build/one.txt (ignored by .gitignore), build/two.txt (ignored by .gitignore)"
    ]


def test_the_quickstart_says_its_ignored_output_in_one_quiet_line_at_a_terminal(
    arreio_env: dict, tmp_path: Path
) -> None:
    """The first thing a new user runs: `build/quickstart-summary.md` is gitignored. At an 80-column
    terminal that is one line, a note, not a yellow warning wrapped over two."""
    import shutil
    import sys

    from tests.terminal import Terminal

    repo = Path(__file__).resolve().parents[2]
    work = tmp_path / "clone"
    shutil.copytree(repo / "fixtures" / "quickstart", work / "fixtures" / "quickstart")
    shutil.copytree(repo / "fixtures" / "goals", work / "fixtures" / "goals")
    (work / ".gitignore").write_text("build/\n")
    term = Terminal(
        [sys.executable, "-m", "arreio.cli.launch", "run", "--goal", "fixtures/goals/quickstart.md", "--offline"],
        cwd=work,
        env=arreio_env,
        columns=80,
    )
    assert term.wait(timeout=120) == 0, term.plain
    lines = [line for line in term.plain.splitlines() if "build/quickstart-summary.md" in line and "remove" in line]
    assert lines == ["note: undo will not remove build/quickstart-summary.md (ignored by .gitignore)"], term.plain
    assert "warning" not in term.plain and "\x1b[33m" not in term.output  # nothing in a warning's yellow


def test_diff_says_an_ignored_output_was_left_out_because_it_is_ignored(tmp_path: Path, arreio_env) -> None:
    """`arreio diff` after the quickstart's kind of run: the file it wrote under an ignored folder was
    said to be "not checkpointed (too large or unreadable)", which it is neither. A real process."""
    import json
    import subprocess

    from tests.conftest import run_cli

    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    (work / ".gitignore").write_text("build/\n")
    (work / "notes.md").write_text("# Notes\n\nOne line.\n")
    ran = run_cli(work, arreio_env, "run", "Read notes.md and write a summary to build/summary.md.", "--offline")
    assert ran.returncode == 0, ran.stderr
    assert (work / "build" / "summary.md").exists()
    shown = run_cli(work, arreio_env, "diff")
    assert shown.returncode == 0, shown.stderr
    assert "not checkpointed (ignored by .gitignore): build/summary.md" in shown.stdout
    assert "too large or unreadable" not in shown.stdout
    as_json = json.loads(run_cli(work, arreio_env, "diff", "--json").stdout)
    assert as_json["skipped_why"] == {"build/summary.md": "ignored by .gitignore"}
