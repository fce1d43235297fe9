"""The suite file: validated like plans — the file, the line, what is wrong, the key that was meant."""

from __future__ import annotations

from pathlib import Path

import pytest

from arreio.engine.batch.suite import load_suite
from arreio.engine.core.errors import UsageError
from tests.conftest import REPO

SAMPLE = REPO / "fixtures" / "batch" / "sample" / "suite.yaml"


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "w").mkdir(exist_ok=True)
    (tmp_path / "r.yaml").write_text("- text: done\n")
    path = tmp_path / "suite.yaml"
    path.write_text(text)
    return path


def error_of(path: Path) -> str:
    with pytest.raises(UsageError) as caught:
        load_suite(path)
    return caught.value.message


def test_the_sample_suite_loads_with_defaults_applied_and_paths_resolved() -> None:
    suite = load_suite(SAMPLE)
    assert [t.id for t in suite.tasks] == ["fix-add", "write-notes", "summarize"]
    fix = suite.tasks[0]
    assert fix.max_steps == 10 and fix.timeout_s == 60  # from defaults
    assert fix.workdir == SAMPLE.parent / "tasks" / "fix-add" and fix.script.is_file()
    assert fix.model is None  # a script decides the model
    assert suite.tasks[2].model == "offline" and suite.tasks[1].setup == "test -f notes.md"
    assert [g["kind"] for g in suite.tasks[1].gates] == ["file", "promise"]


def test_a_misspelt_key_names_its_line_and_the_key_meant(tmp_path: Path) -> None:
    path = write(tmp_path, "tasks:\n  - id: a\n    goal: do it\n    scirpt: r.yaml\n")
    assert error_of(path) == f"{path}:4: tasks.0.scirpt: unknown key 'scirpt' (did you mean 'script'?)"


def test_a_misspelt_default_is_caught_too(tmp_path: Path) -> None:
    path = write(tmp_path, "defaults:\n  max_step: 3\ntasks:\n  - {id: a, goal: do it}\n")
    assert error_of(path) == f"{path}:2: defaults.max_step: unknown key 'max_step' (did you mean 'max_steps'?)"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("tasks:\n  - id: a\n", ":2: task 'a' needs exactly one of goal: or goal_file:"),
        ("tasks:\n  - {id: a, goal: x, goal_file: r.yaml}\n", "needs exactly one of goal: or goal_file:"),
        ("tasks:\n  - {id: a, goal: x}\n  - {id: a, goal: y}\n", ":3: duplicate task id 'a'"),
        ("tasks:\n  - {id: a, goal: x, workdir: nowhere}\n", "task 'a': workdir nowhere: no such folder"),
        ("tasks:\n  - {id: a, goal: x, script: r.yaml, cassette: r.yaml}\n", "give one of them"),
        ("tasks:\n  - {id: a, goal: x, script: r.yaml, model: offline}\n", "model: cannot go with script:/cassette:"),
        ("tasks:\n  - {id: a, goal: x, gates: [{kind: command}]}\n", "gate 1 (command) needs `command:`"),
        ("tasks:\n  - {id: 'a b', goal: x}\n", ":2: tasks.0.id: String should match pattern"),
        ("tasks: []\n", "tasks: List should have at least 1 item"),
        ("- a\n", "a suite is a mapping with `tasks:`"),
        ("tasks:\n  - {id: a, goal: x\n", ":3: "),  # broken YAML: the line the parser stopped at
    ],
)
def test_each_mistake_is_one_clear_line(tmp_path: Path, text: str, expected: str) -> None:
    message = error_of(write(tmp_path, text))
    assert expected in message and "\n" not in message


def test_filter_takes_globs(tmp_path: Path) -> None:
    suite = load_suite(
        write(tmp_path, "tasks:\n  - {id: fix-a, goal: x}\n  - {id: fix-b, goal: x}\n  - {id: doc, goal: x}\n")
    )
    assert [t.id for t in suite.select("fix-*")] == ["fix-a", "fix-b"]
    assert [t.id for t in suite.select("doc, fix-b")] == ["fix-b", "doc"]
    assert suite.select("nope") == []


def test_goal_file_is_read_relative_to_the_suite(tmp_path: Path) -> None:
    (tmp_path / "GOAL.md").write_text("# Do the thing\n")
    suite = load_suite(write(tmp_path, "tasks:\n  - {id: a, goal_file: GOAL.md, workdir: w}\n"))
    assert suite.tasks[0].goal == "# Do the thing\n" and suite.tasks[0].workdir == (tmp_path / "w").resolve()


def test_a_workdir_too_big_to_copy_per_attempt_is_refused_at_once(tmp_path: Path) -> None:
    """Regression: `workdir: ../..` made each attempt copy everything below it (the whole disk),
    with no output for ten minutes."""
    from arreio.engine.batch.suite import _too_big_to_copy

    message = error_of(write(tmp_path, "tasks:\n  - {id: a, goal: x, workdir: /}\n"))
    assert ":2: task 'a': workdir / (/) holds more than " in message
    assert message.endswith("every attempt copies it whole; point workdir at the task's own folder")
    folder = tmp_path / "task"
    (folder / "src").mkdir(parents=True)
    for i in range(6):
        (folder / "src" / f"f{i}.txt").write_text("x" * 100)
    (folder / ".arreio").mkdir()  # not copied: not counted
    for i in range(50):
        (folder / ".arreio" / f"s{i}").write_text("")
    assert _too_big_to_copy(folder, max_files=6) is None
    assert _too_big_to_copy(folder, max_files=5) == "more than 5 files"
    assert _too_big_to_copy(folder, max_bytes=550) == "more than 550 bytes"
