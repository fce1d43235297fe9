"""`arreio diff` and `arreio undo` after a scripted run through the real CLI, on real files with real git:
what the run changed is listed exactly, undo restores every byte, a hand edit is a conflict, an undo
can be undone, and the report and the `done` event carry the change summary."""

from __future__ import annotations

import json
from pathlib import Path

from tests.checkpoints.conftest import events_of, scripted, tree_state

SCRIPT = """\
- text: "Changing files."
  tool_calls:
    - {name: write_file, arguments: {path: keep.txt, content: "new\\n"}}
    - {name: shell, arguments: {command: "rm gone.txt"}}
    - {name: edit_file, arguments: {path: edit.txt, old: "beta", new: "BETA"}}
- text: "Creating files."
  tool_calls:
    - {name: write_file, arguments: {path: new1.txt, content: "one\\n"}}
    - {name: write_file, arguments: {path: sub/deep/new2.txt, content: "two\\n"}}
- text: "All done."
"""
CHANGES = {"created": ["new1.txt", "sub/deep/new2.txt"], "modified": ["edit.txt", "keep.txt"], "deleted": ["gone.txt"]}


def seed(work: Path) -> dict:
    (work / "keep.txt").write_text("old\n")
    (work / "gone.txt").write_text("bye\n")
    (work / "edit.txt").write_text("alpha\nbeta\ngamma\n")
    (work / "untouched.txt").write_text("same\n")
    return tree_state(work)


def test_diff_lists_exactly_what_the_run_changed_and_undo_restores_every_byte(work: Path, cli) -> None:
    before = seed(work)
    result, events, report = scripted(cli, work, SCRIPT)
    assert result.exit_code == 0, result.output
    after = tree_state(work)
    assert report["changes"] == CHANGES and events[-1]["changes"] == CHANGES  # the report and `done` carry it
    assert report["checkpoint_before"].startswith("ck-") and report["checkpoint_skipped"] == []

    shown = cli("diff", "--json")
    assert shown.exit_code == 0, shown.output
    body = json.loads(shown.stdout)
    assert {k: body[k] for k in CHANGES} == CHANGES and body["run_id"] == report["run_id"]
    assert {f["path"]: f["status"] for f in body["files"]} == {
        "new1.txt": "created",
        "sub/deep/new2.txt": "created",
        "edit.txt": "modified",
        "keep.txt": "modified",
        "gone.txt": "deleted",
    }
    assert "-beta\n+BETA" in body["patch"] and "-old\n+new" in body["patch"] and "+++ /dev/null" in body["patch"]
    stat = cli("diff", "--stat")
    assert stat.exit_code == 0 and "5 files changed" in stat.stdout and "sub/deep/new2.txt" in stat.stdout
    human = cli("diff")
    assert "2 created, 2 modified, 1 deleted" in human.stdout and "untouched.txt" not in human.stdout

    # Not a terminal and no --yes: the plan is shown, nothing changes, exit 2 says what to add.
    asked = cli("undo")
    assert asked.exit_code == 2 and "--yes" in asked.stderr
    assert (
        "restore" in asked.stdout and "bring back  gone.txt" in asked.stdout and "remove      new1.txt" in asked.stdout
    )
    dry = cli("undo", "--dry-run")
    assert dry.exit_code == 0 and tree_state(work) == after

    done = cli("undo", "--yes")
    assert done.exit_code == 0, done.output
    assert tree_state(work) == before  # modified back, deleted back, created gone — bytes and modes
    assert not (work / "sub").exists()  # the folders the run created went with its files
    undo_id = done.stdout.split("recorded as ")[1].split(";")[0]
    audit = [json.loads(line) for line in (work / ".arreio" / "audit.jsonl").read_text().splitlines()]
    entry = [e for e in audit if e["kind"] == "undo"][-1]["payload"]
    assert entry["undid"] == report["run_id"] and entry["run_id"] == undo_id and entry["files"] == 5

    again = cli("undo", "--yes")  # the last *run* is undone already: nothing to do
    assert again.exit_code == 0 and "nothing to undo" in again.stdout


def test_a_file_changed_by_hand_after_the_run_is_a_conflict(work: Path, cli) -> None:
    before = seed(work)
    result, _, _ = scripted(cli, work, SCRIPT)
    assert result.exit_code == 0
    (work / "keep.txt").write_text("mine, by hand\n")
    (work / "edit.txt").unlink()
    (work / "new1.txt").unlink()  # a created file already gone: nothing to do there, no conflict
    by_hand = tree_state(work)

    refused = cli("undo", "--yes")
    assert refused.exit_code == 1
    assert "keep.txt" in refused.stderr and "edit.txt" in refused.stderr and "--force" in refused.stderr
    assert "keep.txt  (changed since)" in refused.stdout and "edit.txt  (deleted since)" in refused.stdout
    assert "already as before: new1.txt" in refused.stdout
    assert tree_state(work) == by_hand  # nothing changed, not even the paths without a conflict

    forced = cli("undo", "--yes", "--force")
    assert forced.exit_code == 0, forced.output
    assert tree_state(work) == before and "2 forced" in forced.stdout
    # the plan it shows says what --force does (it said "not overwritten without --force")
    assert "conflicts — changed since, overwritten too (--force):" in forced.stdout
    assert "not overwritten without --force" not in forced.stdout


def test_an_undo_is_checkpointed_and_can_be_undone(work: Path, cli) -> None:
    before = seed(work)
    result, _, report = scripted(cli, work, SCRIPT)
    assert result.exit_code == 0
    after = tree_state(work)
    assert cli("undo", "--yes").exit_code == 0
    listed = json.loads(cli("checkpoints", "list", "--json").stdout)
    assert [e["source"] for e in listed] == ["run", "undo"]
    restore = listed[-1]
    assert restore["undid"] == report["run_id"] and restore["id"].startswith("undo-") and restore["finished"]
    assert "undid " + report["run_id"] in cli("checkpoints", "list").stdout

    back = cli("undo", "--run", restore["id"], "--yes")
    assert back.exit_code == 0, back.output
    assert tree_state(work) == after  # the agent's work is back, byte for byte

    # --to a checkpoint: the one before the run
    to = cli("undo", "--to", report["checkpoint_before"], "--yes")
    assert to.exit_code == 0, to.output
    assert tree_state(work) == before
    assert cli("undo", "--run", "x", "--to", "y").exit_code == 2
    assert cli("undo", "--to", "ck-nosuch", "--yes").exit_code == 2
    assert cli("diff", "--run", "run-nosuch").exit_code == 2


def test_diff_of_one_step(work: Path, cli) -> None:
    seed(work)
    result, _, _ = scripted(cli, work, SCRIPT)
    assert result.exit_code == 0
    one = json.loads(cli("diff", "--step", "1", "--json").stdout)
    assert one["created"] == [] and one["modified"] == ["edit.txt", "keep.txt"] and one["deleted"] == ["gone.txt"]
    two = json.loads(cli("diff", "--step", "2", "--json").stdout)
    assert two["created"] == ["new1.txt", "sub/deep/new2.txt"] and two["modified"] == two["deleted"] == []
    missing = cli("diff", "--step", "7")
    assert missing.exit_code == 2 and "steps with changes: 1, 2" in missing.stderr
    rounds = json.loads(cli("checkpoints", "list", "--json").stdout)[0]["checkpoints"]
    afters = [c for c in rounds if c["phase"] == "after"]
    assert [c["step"] for c in afters] == [1, 2]
    assert [c["name"] for c in afters[0]["calls"]] == ["write_file", "shell", "edit_file"]


def test_undo_restores_modes_line_endings_binary_and_symlinks_byte_for_byte(work: Path, cli) -> None:
    (work / ".gitattributes").write_text("* text=auto eol=lf\n*.bin filter=lfs\n")  # must not change a byte
    (work / "tool.sh").write_text("#!/bin/sh\necho hi\n")
    (work / "tool.sh").chmod(0o755)
    (work / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (work / "blob.bin").write_bytes(bytes(range(256)) * 4)
    (work / "link").symlink_to("crlf.txt")
    before = tree_state(work)
    script = """\
- text: "Rewriting."
  tool_calls:
    - {name: shell, arguments: {command: "chmod -x tool.sh; printf 'three\\\\r\\\\n' >> crlf.txt;
        printf 'x' > blob.bin; ln -sfn tool.sh link; chmod +x crlf.txt"}}
- text: "Done."
"""
    result, _, report = scripted(cli, work, script)
    assert result.exit_code == 0, result.output
    assert report["changes"]["modified"] == ["blob.bin", "crlf.txt", "link", "tool.sh"]
    assert cli("undo", "--yes").exit_code == 0
    assert tree_state(work) == before
    assert (work / "crlf.txt").read_bytes() == b"one\r\ntwo\r\n" and (work / "tool.sh").stat().st_mode & 0o111


def test_a_read_only_run_makes_no_checkpoint_io(work: Path, cli) -> None:
    (work / "notes.md").write_text("# notes\nsome text\n")
    script = """\
- text: "Only looking."
  tool_calls:
    - {name: list_dir, arguments: {}}
    - {name: read_file, arguments: {path: notes.md}}
    - {name: grep, arguments: {pattern: "text"}}
- text: "Nothing changed."
"""
    result, events, report = scripted(cli, work, script)
    assert result.exit_code == 0, result.output
    assert not (work / ".arreio" / "checkpoints").exists()  # the store was never opened
    empty = {"created": [], "modified": [], "deleted": []}
    assert report["changes"] == empty and events[-1]["changes"] == empty and report["checkpoint_before"] is None
    assert cli("diff").exit_code == 2  # no checkpointed run here


def test_a_gitignored_build_folder_is_never_touched(work: Path, cli) -> None:
    (work / ".gitignore").write_text("build/\n")
    (work / "build").mkdir()
    (work / "build" / "old.o").write_text("old object\n")
    script = """\
- text: "Building."
  tool_calls:
    - {name: shell, arguments: {command: "echo new > build/new.o; echo more >> build/old.o"}}
    - {name: write_file, arguments: {path: notes.txt, content: "built\\n"}}
- text: "Done."
"""
    result, _, report = scripted(cli, work, script)
    assert result.exit_code == 0, result.output
    assert report["changes"] == {"created": ["notes.txt"], "modified": [], "deleted": []}
    assert cli("undo", "--yes").exit_code == 0
    assert not (work / "notes.txt").exists()
    assert (work / "build" / "new.o").read_text() == "new\n"  # ignored: neither captured nor undone
    assert (work / "build" / "old.o").read_text() == "old object\nmore\n"


def test_done_event_in_the_live_stream_matches_the_saved_report(work: Path, cli) -> None:
    seed(work)
    _, events, report = scripted(cli, work, SCRIPT)
    saved = events_of((work / report["events_path"]).read_text())
    assert saved[-1]["changes"] == events[-1]["changes"] == report["changes"] == CHANGES


def test_odd_file_names_round_trip(work: Path, cli) -> None:
    (work / b"caf\xe9.txt".decode("utf-8", "surrogateescape")).write_bytes(b"latin-1 name\n")  # not UTF-8
    (work / 'with space & "quotes".txt').write_text("x\n")
    before = tree_state(work)
    script = """\
- text: "Renaming."
  tool_calls:
    - {name: shell, arguments: {command: "rm caf*.txt with*; printf n > 'new\\nline.txt'; echo y > 'é ü.txt'"}}
- text: "Done."
"""
    result, events, report = scripted(cli, work, script)
    assert result.exit_code == 0, result.output
    assert (
        report["changes"]
        == events[-1]["changes"]
        == {
            "created": ['"new\\nline.txt"', "é ü.txt"],
            "modified": [],
            "deleted": ["caf\\xe9.txt", 'with space & "quotes".txt'],
        }
    )
    body = json.loads(cli("diff", "--json").stdout)
    assert "é ü.txt" in body["created"] and "new\nline.txt" in body["created"]
    assert cli("undo", "--yes").exit_code == 0
    assert tree_state(work) == before


def test_a_file_that_became_a_folder_and_a_folder_that_became_a_symlink_come_back(work: Path, cli, tmp_path) -> None:
    (work / "d").mkdir()
    (work / "d" / "x").write_text("inner\n")
    (work / "a").write_text("file a\n")
    (work / "src").mkdir()
    (work / "src" / "main.py").write_text("print('hi')\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim").write_text("not yours\n")
    before = tree_state(work)
    script = f"""\
- text: "Swapping."
  tool_calls:
    - {{name: shell, arguments: {{command: "rm -r d && echo now-a-file > d && rm a && mkdir a && echo in > a/f
        && rm -r src && ln -s {outside} src"}}}}
- text: "Done."
"""
    result, _, report = scripted(cli, work, script)
    assert result.exit_code == 0, result.output
    assert report["changes"] == {"created": ["a/f", "d", "src"], "modified": [], "deleted": ["a", "d/x", "src/main.py"]}
    assert cli("undo", "--yes").exit_code == 0
    assert tree_state(work) == before and not (work / "src").is_symlink()
    assert sorted(p.name for p in outside.iterdir()) == ["victim"]  # nothing written through the link
