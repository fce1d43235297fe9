"""The offline model's file policy (invariant 8: nothing the user had is destroyed): it reads what the goal names,
writes only the goal's outputs, extends a document only when asked and only by adding a marked
section, never overwrites or deletes a file that existed, and says so when it wrote nothing.

One row per phrasing: how the goal is read (`read_goal`), then the same goal run through the real
pipeline over `fixtures/offline/project/`. A property test then throws random goals over random trees.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arreio.engine.judgement.promises import file_claims
from arreio.engine.providers.offline.answer import APPEND_MARK
from arreio.engine.providers.offline.goal import goal_files, read_goal
from arreio.engine.providers.testing import FixedClock
from arreio.engine.run.pipeline import PipelineDeps, RunOptions, run_to_end
from tests.conftest import REPO

FIXTURES = REPO / "fixtures" / "offline"
PROJECT = FIXTURES / "project"


@dataclass(frozen=True)
class Case:
    goal: str
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    appends: tuple[str, ...] = ()
    changes: tuple[str, ...] = ()
    says: tuple[str, ...] = ()  # in the final answer


def _goal(name: str) -> str:
    return (FIXTURES / "goals" / name).read_text()


CASES: dict[str, Case] = {
    # the issue's own examples
    "go-through-put-in": Case(
        "Go through `src/app.py` and put a list of its functions in `functions.md`.",
        reads=("src/app.py",),
        writes=("functions.md",),
    ),
    "write-to": Case(
        "Read notes.md and write the summary to notes/out.md.", reads=("notes.md",), writes=("notes/out.md",)
    ),
    # a verb's form ending a noun phrase is a noun: the count was read as the verb, count.txt as an input
    # ("The goal names no file to write, so I wrote nothing.")
    "its-line-count-to": Case(
        "Read notes.md and write its line count to count.txt.", reads=("notes.md",), writes=("count.txt",)
    ),
    "the-word-count-to": Case(
        "Read notes.md and write the word count to count.txt.", reads=("notes.md",), writes=("count.txt",)
    ),
    "a-comma-ends-the-noun-phrase": Case(
        "In the folder, count the lines of notes.md and write them to count.txt.",
        reads=("notes.md",),
        writes=("count.txt",),
    ),
    "save-as": Case("Read todo.md and save it as report.md.", reads=("todo.md",), writes=("report.md",)),
    "create-new": Case("Create NEWS.md.", writes=("NEWS.md",)),
    "create-existing": Case("Create CHANGES.md.", writes=("CHANGES.md",), says=("did not overwrite",)),
    "produce-in-backticks": Case(
        "Produce a table in `docs/table.md` from `data/table.csv`.",
        reads=("data/table.csv",),
        writes=("docs/table.md",),
    ),
    "summarise-into": Case("Summarise notes.md into summary.md.", reads=("notes.md",), writes=("summary.md",)),
    "generate-from": Case("Generate b.md from notes.md.", reads=("notes.md",), writes=("b.md",)),
    "question": Case("What does src/app.py do?", reads=("src/app.py",), says=("it defines load, serve, App, run",)),
    # a dot-folder is a folder like any other (a path under one used to go unseen: "names no file to write")
    "into-a-dot-folder": Case(
        "Summarise notes.md into .github/SUMMARY.md.", reads=("notes.md",), writes=(".github/SUMMARY.md",)
    ),
    # passive forms
    "passive-created": Case("`status.md` should be created from todo.md.", reads=("todo.md",), writes=("status.md",)),
    "passive-written-to": Case(
        "The summary of notes.md should be written to out/summary.md.", reads=("notes.md",), writes=("out/summary.md",)
    ),
    "passive-subjects": Case(
        "notes.md and todo.md are to be summarised into digest.md.",
        reads=("notes.md", "todo.md"),
        writes=("digest.md",),
    ),
    "passive-negated": Case(
        "README.md must not be changed. Save a summary of it as readme-summary.md.",
        reads=("README.md",),
        writes=("readme-summary.md",),
    ),
    # into / to / as / in / at
    "summarise-in": Case("Summarise notes.md in brief.md.", reads=("notes.md",), writes=("brief.md",)),
    "convert-to": Case("Convert data/table.csv to table.md.", reads=("data/table.csv",), writes=("table.md",)),
    "export-as": Case("Export data/table.csv as table.txt.", reads=("data/table.csv",), writes=("table.txt",)),
    "put-into": Case(
        "Put the open items of todo.md into `lists/items.md`.", reads=("todo.md",), writes=("lists/items.md",)
    ),
    "save-at": Case("Save the report at reports/final.md.", writes=("reports/final.md",)),
    "weak-in-yields": Case(
        "Write a summary of the TODOs in todo.md to todos.md.", reads=("todo.md",), writes=("todos.md",)
    ),
    "read-in": Case("Read the decisions in notes.md.", reads=("notes.md",)),
    # lists of outputs, bullets, labels, headings
    "list-of-outputs": Case(
        "Write `one.md`, `two.md` and `three.md` from notes.md.",
        reads=("notes.md",),
        writes=("one.md", "two.md", "three.md"),
    ),
    "bullets-with-verbs": Case(
        "- Read `notes.md`\n- Read `todo.md`\n- Write `bullets.md`\n",
        reads=("notes.md", "todo.md"),
        writes=("bullets.md",),
    ),
    "bullets-after-a-colon": Case(
        "Read these first:\n\n- notes.md\n- todo.md\n\nThen write the summary to status.md.",
        reads=("notes.md", "todo.md"),
        writes=("status.md",),
    ),
    "label-lines": Case("Output: `labelled.md`\nInput: `notes.md`\n", reads=("notes.md",), writes=("labelled.md",)),
    "goal-md-headings": Case(
        _goal("headings.md"), reads=("notes.md", "todo.md", "README.md"), writes=("status/weekly.md",)
    ),
    "goal-md-labels": Case(
        _goal("labels.md"), reads=("notes.md", "docs/guide.md"), writes=("digest/short.md", "digest/long.md")
    ),
    "title-names-the-file": Case("# Update CHANGES.md\n\nUse todo.md.\n", reads=("todo.md",), appends=("CHANGES.md",)),
    # paths: spaces in backticks, nested folders, possessives
    "spaces-in-backticks": Case(
        "Read `my notes/a b.md`. Then write `out put/summary.md`.",
        reads=("my notes/a b.md",),
        writes=("out put/summary.md",),
    ),
    "nested-folders": Case(
        "Save a summary of docs/guide.md to reports/2024/q1/summary.md.",
        reads=("docs/guide.md",),
        writes=("reports/2024/q1/summary.md",),
    ),
    "possessive": Case("Write notes.md's decisions to decisions.md.", reads=("notes.md",), writes=("decisions.md",)),
    "file-called": Case(
        "Create a file called notes2.md with a summary of notes.md.", reads=("notes.md",), writes=("notes2.md",)
    ),
    "based-on": Case("Based on notes.md, draft a plan in plan.md.", reads=("notes.md",), writes=("plan.md",)),
    "goes-to": Case(
        "Summarise `todo.md`; the output goes to `todo-summary.md`.", reads=("todo.md",), writes=("todo-summary.md",)
    ),
    "copy-to": Case("Copy notes.md to notes-copy.md.", reads=("notes.md",), writes=("notes-copy.md",)),
    "compare-record": Case(
        "Compare notes.md with todo.md and record the differences in diff.md.",
        reads=("notes.md", "todo.md"),
        writes=("diff.md",),
    ),
    # extending a file that exists: a marked section at its end, nothing above it changed
    "append-to": Case("Append a summary of todo.md to CHANGES.md.", reads=("todo.md",), appends=("CHANGES.md",)),
    "update-with": Case("Update README.md with a summary of notes.md.", reads=("notes.md",), appends=("README.md",)),
    "add-section-to": Case(
        "Add a section to docs/guide.md about todo.md.", reads=("todo.md",), appends=("docs/guide.md",)
    ),
    "extend-itself": Case("Extend notes.md.", appends=("notes.md",)),
    "append-no-final-newline": Case(
        "Append a note about todo.md to log.txt.", reads=("todo.md",), appends=("log.txt",)
    ),
    "append-to-new-file": Case(
        "Append the open items of todo.md to log/new.md.", reads=("todo.md",), appends=("log/new.md",)
    ),
    "append-to-code": Case(
        "Update src/app.py with a summary of notes.md.",
        reads=("notes.md",),
        appends=("src/app.py",),
        says=("only to text documents",),
    ),
    # what it must not do: edit, delete, overwrite
    "fix-in": Case("Fix the typos in README.md.", changes=("README.md",), says=("left it as it was",)),
    "delete": Case("Delete todo.md.", changes=("todo.md",), says=("does not edit, move or delete",)),
    "rename": Case("Rename notes.md to old-notes.md.", changes=("notes.md", "old-notes.md")),
    "move-into": Case("Move todo.md into archive/todo.md.", changes=("todo.md", "archive/todo.md")),
    "dont-write-anything": Case(
        "Don't write anything; just tell me what todo.md contains.",
        reads=("todo.md",),
        says=("todo.md has 5 lines and 21 words.",),
    ),
    "negated-verb": Case(
        "Do not modify src/app.py; write a summary of it to app-summary.md.",
        reads=("src/app.py",),
        writes=("app-summary.md",),
    ),
    "negated-destination": Case(
        "Write the summary to out.md, not to notes.md.", reads=("notes.md",), writes=("out.md",)
    ),
    "existing-target": Case(
        "Write a summary of todo.md to notes.md.",
        reads=("todo.md",),
        writes=("notes.md",),
        says=("notes.md already existed", "did not overwrite", "I wrote nothing"),
    ),
    "no-target": Case(
        "Read notes.md and todo.md and write a summary.",
        reads=("notes.md", "todo.md"),
        says=("The goal names no file to write, so I wrote nothing.",),
    ),
    "quickstart-wrapped": Case(
        "Read `notes.md` and `todo.md` to understand where the\nproject stands.\n\n"
        "Then write a short status summary to `build/summary.md`: one section per file you read,\n"
        "with its size and the points that matter.\n",
        reads=("notes.md", "todo.md"),
        writes=("build/summary.md",),
    ),
}


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".arreio" not in p.relative_to(root).parts
    }


def run(goal: str, work: Path, **options):
    events = asyncio.run(
        run_to_end(RunOptions(goal_text=goal, cwd=work, model="offline", **options), PipelineDeps(clock=FixedClock()))
    )
    return events, events[-1]


def check_run(goal: str, work: Path, appendable: set[str]) -> tuple[dict[str, bytes], dict[str, bytes], str]:
    """Run `goal` over `work` and check the invariants every run keeps; returns (before, after, answer)."""
    before = snapshot(work)
    events, done = run(goal, work)
    after = snapshot(work)
    # A goal it could not do (nothing to write, an edit it does not make, a refused write) is no success.
    assert done.type == "done" and (
        done.exit_code == 0 or (done.exit_code == 1 and done.message.startswith("the model did not do the goal"))
    ), done.message
    assert not any(e.type == "tool_start" and e.name == "shell" for e in events)
    for path, old in before.items():
        assert path in after, f"{path} was deleted"
        if path in appendable and after[path] != old:
            assert after[path].startswith(old) and APPEND_MARK.encode() in after[path][len(old) :], path
        else:
            assert after[path] == old, f"{path} existed before the run and was changed"
    changed = {p for p in after if before.get(p) != after[p]}
    # the answer claims exactly the files it created or extended, and the promise gate agrees
    assert set(file_claims(done.final_text)) == changed, done.final_text
    assert all(e.passed for e in events if e.type == "gate_result")
    return before, after, done.final_text


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_how_the_goal_is_read(case: Case) -> None:
    files = read_goal(case.goal)
    assert (files.reads, files.writes, files.appends, files.changes) == (
        case.reads,
        case.writes,
        case.appends,
        case.changes,
    )
    assert goal_files(case.goal) == (
        [p for p in files.named if p in case.reads + case.changes],
        [p for p in files.named if p in case.writes + case.appends],
    )


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_what_the_run_does(case: Case, tmp_path: Path) -> None:
    work = tmp_path / "work"
    shutil.copytree(PROJECT, work)
    before, after, answer = check_run(case.goal, work, set(case.appends))
    existed = set(before)
    created = set(after) - existed
    assert created == {p for p in case.writes + case.appends if p not in existed}
    extended = {p for p in case.appends if p in existed and after[p] != before[p]}
    assert extended == {p for p in case.appends if p in existed and Path(p).suffix in (".md", ".txt")}
    for phrase in case.says:
        assert phrase in answer
    if not created and not extended:  # nothing written: no success claim, and it says so
        assert not answer.startswith("Done.")
        assert "I wrote nothing" in answer or not (case.writes + case.appends + case.changes)
    for path in created & set(case.writes):
        assert (work / path).read_text().startswith("# Summary: ")


def test_a_crlf_document_is_extended_in_its_own_line_endings(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_bytes(b"# Notes\r\n\r\n- one\r\n")
    (tmp_path / "todo.md").write_text("- [ ] two\n")
    _, after, _ = check_run("Append a summary of todo.md to notes.md.", tmp_path, {"notes.md"})
    added = after["notes.md"][len(b"# Notes\r\n\r\n- one\r\n") :]
    assert added.startswith(b"\r\n" + APPEND_MARK.encode() + b"\r\n") and b"\n" not in added.replace(b"\r\n", b"")


def test_a_large_document_without_a_final_newline_is_left_alone(tmp_path: Path) -> None:
    # over 1 KB the listing shows no exact size, so "ends without a newline" cannot be proven: no edit
    (tmp_path / "big.md").write_text("\n".join(f"line {i}" for i in range(300)))
    before, after, answer = check_run("Update big.md.", tmp_path, {"big.md"})
    assert after == before and "I could not match all of big.md exactly" in answer


def test_without_list_dir_a_read_tells_what_exists(tmp_path: Path) -> None:
    shutil.copytree(PROJECT, tmp_path / "w")
    work = tmp_path / "w"
    before = snapshot(work)
    _, done = run(
        "Write a summary of todo.md to notes.md and to fresh.md.", work, tools=["read_file", "write_file", "edit_file"]
    )
    after = snapshot(work)
    assert after["notes.md"] == before["notes.md"] and "fresh.md" in after
    assert "notes.md already existed" in done.final_text and file_claims(done.final_text) == ["fresh.md"]


def test_a_resumed_run_ends_like_an_uninterrupted_one(tmp_path: Path) -> None:
    goal = "Update README.md with a summary of notes.md. Write `out/a.md`."
    straight, stepped = tmp_path / "straight", tmp_path / "stepped"
    shutil.copytree(PROJECT, straight)
    shutil.copytree(PROJECT, stepped)
    run(goal, straight)
    events, first = run(goal, stepped, max_steps=2)
    assert first.exit_code == 4
    _, resumed = run_resume(stepped, events[0].session_id)
    assert resumed.exit_code == 0 and snapshot(stepped) == snapshot(straight)


def run_resume(work: Path, session_id: str):
    events = asyncio.run(
        run_to_end(
            RunOptions(resume=session_id, cwd=work, model="offline", max_steps=20), PipelineDeps(clock=FixedClock())
        )
    )
    return events, events[-1]


def test_the_same_goal_gives_the_same_events_and_files(tmp_path: Path) -> None:
    goal = _goal("headings.md") + "\nAlso append the open items of todo.md to CHANGES.md.\n"
    runs = []
    for name in ("one", "two"):
        shutil.copytree(PROJECT, tmp_path / name)
        events, _ = run(goal, tmp_path / name)
        volatile = {"run_id", "session_id", "report_path", "cwd", "duration_ms", "duration_s"}
        runs.append(
            (
                [{k: v for k, v in e.model_dump().items() if k not in volatile} for e in events],
                snapshot(tmp_path / name),
            )
        )
    assert runs[0] == runs[1]


def test_a_goal_md_with_headings_through_goal_path(tmp_path: Path) -> None:
    shutil.copytree(PROJECT, tmp_path / "w")
    work = tmp_path / "w"
    shutil.copy(FIXTURES / "goals" / "headings.md", work / "GOAL.md")
    events = asyncio.run(
        run_to_end(RunOptions(goal_path=work / "GOAL.md", cwd=work, model="offline"), PipelineDeps(clock=FixedClock()))
    )
    assert events[-1].exit_code == 0 and (work / "status" / "weekly.md").is_file()
    assert "## notes.md" in (work / "status" / "weekly.md").read_text()


# -- the property: no byte of a pre-existing file changes unless the goal extends that very file -------
# (template, role of each slot); {a}/{b}/{c} are filled with existing or new file names at random
TEMPLATES: list[tuple[str, dict[str, str]]] = [
    ("Read {a} and write the summary to {b}.", {"a": "read", "b": "write"}),
    ("Summarise {a} into {b}.", {"a": "read", "b": "write"}),
    ("Generate {b} from {a}.", {"a": "read", "b": "write"}),
    ("{b} should be created from {a}.", {"a": "read", "b": "write"}),
    ("Put a list of the headings of {a} in {b}.", {"a": "read", "b": "write"}),
    ("Create {b}.", {"b": "write"}),
    ("Save it as {b}.", {"b": "write"}),
    ("Update {c} with a summary of {a}.", {"a": "read", "c": "append"}),
    ("Append the summary of {a} to {c}.", {"a": "read", "c": "append"}),
    ("Add a section to {c} about {a}.", {"a": "read", "c": "append"}),
    ("Extend {c}.", {"c": "append"}),
    ("Do not modify {a}; save a summary of it as {b}.", {"a": "read", "b": "write"}),
    ("What does {a} say?", {"a": "read"}),
    ("Delete {a}.", {"a": "change"}),
    ("Rewrite {a} as {b}.", {"a": "change", "b": "change"}),
    ("Fix the typos in {a}.", {"a": "change"}),
    ("Overwrite {a} with the contents of {b}.", {"a": "change", "b": "read"}),
    ("Write a summary of {a}.", {"a": "read"}),
    ("- Read {a}\n- Write {b}", {"a": "read", "b": "write"}),
    ("## Outputs\n\n- {b}\n\n## Inputs\n\n- {a}", {"a": "read", "b": "write"}),
]
STEMS = ["notes", "todo", "readme", "log", "app", "data", "plan", "my file", "out"]
FOLDERS = ["", "docs/", "src/", "a/b/", "my dir/"]
SUFFIXES = [".md", ".txt", ".py", ".csv"]

names = st.builds(
    lambda folder, stem, suffix: f"{folder}{stem}{suffix}",
    st.sampled_from(FOLDERS),
    st.sampled_from(STEMS),
    st.sampled_from(SUFFIXES),
)
line = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=30)
text_bytes = st.builds(
    lambda lines, newline, final: (newline.join(lines) + (newline if final and lines else "")).encode("utf-8"),
    st.lists(line, max_size=8),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),
)
contents = st.one_of(text_bytes, st.binary(max_size=40))


@st.composite
def scenarios(draw):
    existing = draw(st.dictionaries(names, contents, min_size=1, max_size=5))
    pool = sorted(existing)
    chosen = draw(st.lists(st.tuples(st.sampled_from(TEMPLATES), st.integers(0, 10**6)), min_size=1, max_size=3))
    parts, roles = [], []
    for (template, slots), seed in chosen:
        filled = {}
        for i, slot in enumerate(sorted(slots)):
            pick_existing = (seed >> i) & 1
            name = pool[(seed >> 4 + i) % len(pool)] if pick_existing else draw(names)
            filled[slot] = f"`{name}`" if " " in name or (seed >> 8 + i) & 1 else name
            roles.append((name, slots[slot]))
        parts.append(template.format(**filled))
    # Joined by a space or a blank line; after a list item always a blank line: text that follows a
    # list item on its own line continues that item ("- notes.txt notes.md should be created" makes
    # notes.txt a subject of "created", as a person would read it too).
    goal = parts[0]
    for part in parts[1:]:
        ends_in_item = goal.rsplit("\n", 1)[-1].startswith("- ")
        goal += ("\n\n" if ends_in_item else draw(st.sampled_from([" ", "\n\n"]))) + part
    return existing, goal, roles


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(scenarios())
def test_no_pre_existing_byte_changes_unless_that_file_is_extended(scenario) -> None:
    existing, goal, roles = scenario
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, data in existing.items():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).write_bytes(data)
        before = snapshot(work)
        events, done = run(goal, work)
        after = snapshot(work)
        extended = {name for name, role in roles if role == "append"}
        for path, old in before.items():
            if path in extended:
                assert after[path].startswith(old), (goal, path)
            else:
                assert after.get(path) == old, (goal, path)
        new_files = set(after) - set(before)
        assert new_files <= {name for name, role in roles if role in ("write", "append")}, goal
        assert all(e.passed for e in events if e.type == "gate_result"), done.final_text
        # A goal it could not do whole (an edit it does not make, a file it may not overwrite, nothing it
        # may write) fails, saying so; one it did succeeds.
        did = bool(new_files) or any(after[p] != before[p] for p in extended if p in before)
        undone = not did or any(role == "change" or (role == "write" and name in before) for name, role in roles)
        if done.exit_code == 1:
            assert undone and done.message.startswith("the model did not do the goal"), done.message
        else:
            assert done.exit_code == 0, done.message


def test_a_file_made_between_two_instructions_is_not_overwritten(tmp_path: Path) -> None:
    # each new instruction lists the tree again: what the user made in between is theirs
    shutil.copytree(PROJECT, tmp_path / "w")
    work = tmp_path / "w"
    events, first = run("Summarise notes.md into first.md.", work)
    assert first.exit_code == 0 and (work / "first.md").is_file()
    (work / "second.md").write_text("mine\n")
    again = asyncio.run(
        run_to_end(
            RunOptions(
                resume=events[0].session_id, goal_text="Summarise todo.md into second.md.", cwd=work, model="offline"
            ),
            PipelineDeps(clock=FixedClock()),
        )
    )
    assert (work / "second.md").read_text() == "mine\n" and "second.md already existed" in again[-1].final_text


def test_a_plan_of_many_units_stays_within_the_repetition_guard(tmp_path: Path) -> None:
    shutil.copytree(PROJECT, tmp_path / "w")
    work = tmp_path / "w"
    units = "".join(f"  - {{id: u{i}, goal: 'Summarise notes.md into `unit{i}.md`.'}}\n" for i in range(5))
    (work / "five.plan.yaml").write_text("version: 1\nunits:\n" + units)
    events = asyncio.run(
        run_to_end(
            RunOptions(plan=work / "five.plan.yaml", cwd=work, model="offline"), PipelineDeps(clock=FixedClock())
        )
    )
    assert events[-1].exit_code == 0, events[-1].message
    assert not any(e.type == "ceiling" for e in events)
    assert all((work / f"unit{i}.md").is_file() for i in range(5))


@pytest.mark.parametrize(
    ("target", "where"),
    [
        (".arreio/x.md", "arreio's own state folder"),
        (".git/notes.md", "the repository's .git/"),
        ("src/../.git/notes.md", "the repository's .git/"),
        # a doubled slash is one: named as the file system reads it
        (".//.arreio/x.md", "arreio's own state folder"),
        ("src//..//.git/notes.md", "the repository's .git/"),
    ],
)
def test_a_target_inside_the_state_folder_or_git_is_named_and_left_alone(
    tmp_path: Path, target: str, where: str
) -> None:
    work = tmp_path / "work"
    shutil.copytree(PROJECT, work)
    (work / ".git").mkdir()
    events, done = run(f"Write a summary of notes.md to {target}.", work)
    assert done.exit_code == 1 and done.message.startswith("the model did not do the goal"), done.message
    assert not any(e.type == "tool_start" and e.name in ("write_file", "edit_file") for e in events)  # not even tried
    assert not (work / target).exists()
    named = re.sub("/+", "/", target).removeprefix("./")
    assert f"{named} is inside {where}, which the agent may not write" in done.final_text
    assert "I wrote nothing" in done.final_text and "names no file" not in done.final_text


def test_a_file_that_is_not_utf8_is_described_by_its_own_text_not_the_tools_note(tmp_path: Path) -> None:
    """Regression: a one-line cp1252 file was summarised as '2 lines, 14 words; First line: [latin.txt
    is not UTF-8: …]' — read_file's note about the encoding counted as the file's first line."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "latin.txt").write_bytes("café crème\n".encode("cp1252"))
    _, done = run("Summarise latin.txt into s.md.", work)
    assert done.exit_code == 0, done.message
    summary = (work / "s.md").read_text()
    assert "- 1 line, 2 words" in summary and "- First line: café crème" in summary
    assert "not UTF-8" not in summary


def test_a_double_quoted_name_with_a_space_is_the_file_read(tmp_path: Path) -> None:
    """Regression: 'Read "my notes.md"' read notes.md, another file (the bare reader took the name's
    tail). The goal reader takes a double-quoted name with a space whole; the promise gate does not
    (a quoted commit message in an answer must not become a claim)."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "my notes.md").write_text("# Mine\nthe right one\n")
    (work / "notes.md").write_text("# Other\nthe wrong one\n")
    events, done = run('Read "my notes.md" and write a summary to out.md.', work)
    assert done.exit_code == 0, done.message
    read = [e.arguments["path"] for e in events if e.type == "tool_start" and e.name == "read_file"]
    assert read == ["my notes.md"]
    assert "- First line: # Mine" in (work / "out.md").read_text()
    # the promise gate's reader is unchanged: a quoted name is no claim of its own
    assert file_claims('Committed with the message "Update README.md".') == []
