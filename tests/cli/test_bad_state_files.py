"""One bad file among many in the state folder — a skill, a session, a memory substore, the skills'
usage sidecar, the audit journal — is a FIFO, a device, a 2 GB sparse file, billion-laughs YAML or
50,000 levels deep. It is skipped with a warning (or named in one line by the command that reads it
alone); it never hangs, exhausts or crashes a run or a listing of the others. Before, one 50,000-deep
SKILL.md ended every `arreio run` in `internal error: RecursionError`, and one such session file
ended `arreio sessions list` the same way. Real `arreio` processes, each under a timeout."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.bad_files import JSON_KINDS, REASON, SPECIAL, YAML_KINDS, assert_refused, deep_flow, deep_json, laughs, make
from tests.conftest import run_cli

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="FIFOs, /dev/zero")]

TIMEOUT = 90
GOOD_SKILL = "---\nname: good\ndescription: a skill that loads\n---\nDo the good thing.\n"


@pytest.fixture
def work(tmp_path: Path, arreio_env) -> Path:
    """A folder where one offline run already happened: sessions, runs, memory and audit exist."""
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "a.txt").write_text("hi\n")
    first = run_cli(folder, arreio_env, "run", "list the files", "--offline", "--output", "text", timeout=TIMEOUT)
    assert first.returncode == 0, first.stderr
    return folder


def _bad_skill(state: Path, kind: str) -> Path:
    """`skills/bad/SKILL.md`: the bad file itself, or (YAML/JSON kinds) frontmatter holding the bad YAML."""
    skill = state / "skills" / "bad" / "SKILL.md"
    if kind in SPECIAL:
        return make(skill, kind)
    skill.parent.mkdir(parents=True)
    bad = laughs() if kind == "laughs" else "x: " + (deep_flow() + "\n" if kind == "deep-yaml" else deep_json())
    skill.write_text("---\nname: bad\ndescription: a trap\n" + bad + "---\nbody\n")
    return skill


@pytest.mark.parametrize("kind", YAML_KINDS)
def test_a_bad_skill_file_does_not_stop_a_run_or_the_listing(kind: str, work: Path, arreio_env) -> None:
    state = work / ".arreio"
    (state / "skills" / "good").mkdir(parents=True)
    (state / "skills" / "good" / "SKILL.md").write_text(GOOD_SKILL)
    bad = _bad_skill(state, kind)
    run = run_cli(work, arreio_env, "run", "read a.txt", "--offline", "--output", "text", timeout=TIMEOUT)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "a.txt" in run.stdout and "Traceback" not in run.stderr and "internal error" not in run.stderr
    listing = run_cli(work, arreio_env, "skills", "list", timeout=TIMEOUT)
    assert listing.returncode == 0, listing.stderr[-2000:]
    assert "good" in listing.stdout and "a skill that loads" in listing.stdout
    warned = listing.stderr.strip().splitlines()
    assert len(warned) == 1 and str(bad) in warned[0] and REASON[kind] in warned[0], listing.stderr
    shown = run_cli(work, arreio_env, "skills", "show", "bad", timeout=TIMEOUT)
    assert_refused(shown, says="skill 'bad' is not loaded")
    assert REASON[kind] in shown.stderr


def _bad_session(sessions: Path, kind: str, good: Path) -> Path:
    """`bad.jsonl`: the bad file itself, or a good header and then a 50,000-deep line; and (then)
    `head.jsonl`, that line where the header should be."""
    path = sessions / "bad.jsonl"
    if kind in SPECIAL:
        return make(path, kind)
    text = deep_json()
    header = json.loads(good.read_bytes().split(b"\n", 1)[0])
    path.write_text(json.dumps({**header, "id": "bad"}) + "\n" + text)
    (sessions / "head.jsonl").write_text(text)
    return path


@pytest.mark.parametrize("kind", JSON_KINDS)
def test_a_bad_session_file_does_not_stop_the_listing_or_a_new_run(kind: str, work: Path, arreio_env) -> None:
    sessions = work / ".arreio" / "sessions"
    good = next(sessions.glob("*.jsonl"))
    _bad_session(sessions, kind, good)
    listing = run_cli(work, arreio_env, "sessions", "list", timeout=TIMEOUT)
    assert listing.returncode == 0, listing.stderr[-2000:]
    assert good.stem in listing.stdout
    if kind == "sparse":  # listed as damaged, with why
        assert "the session file is 2 GB, over the 1 GB limit" in listing.stdout + listing.stderr
    assert "Traceback" not in listing.stderr and "internal error" not in listing.stderr
    resumed = run_cli(
        work, arreio_env, "run", "--continue", "read a.txt", "--offline", "--output", "text", timeout=TIMEOUT
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "Traceback" not in resumed.stderr and "internal error" not in resumed.stderr
    shown = run_cli(work, arreio_env, "sessions", "show", "bad", timeout=TIMEOUT)
    assert "Traceback" not in shown.stderr and "internal error" not in shown.stderr, shown.stderr[-2000:]
    assert shown.returncode in (0, 2), shown.stderr[-2000:]


@pytest.mark.parametrize("kind", JSON_KINDS)
def test_a_bad_memory_substore_is_skipped_with_a_warning(kind: str, work: Path, arreio_env) -> None:
    memory = work / ".arreio" / "memory"
    if kind in SPECIAL:
        make(memory / "semantic.jsonl", kind)
    else:  # a deep line in a substore in use
        with open(memory / "episodic.jsonl", "a", encoding="utf-8") as episodic:
            episodic.write(deep_json())
    run = run_cli(work, arreio_env, "run", "list the files", "--offline", "--output", "text", timeout=TIMEOUT)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr
    for substore in ("semantic", "episodic", "decision"):
        listed = run_cli(work, arreio_env, "memory", substore, "list", timeout=TIMEOUT)
        assert listed.returncode == 0, listed.stderr[-2000:]
        if substore == "semantic" and kind in SPECIAL:
            assert f"semantic.jsonl: skipped, cannot read it ({REASON[kind]}" in listed.stderr, listed.stderr
        warned = listed.stderr.strip().splitlines()
        assert all(line.startswith("arreio: warning: ") for line in warned), listed.stderr[-2000:]


@pytest.mark.parametrize("kind", SPECIAL)
def test_a_bad_memory_file_leaves_the_run_going_and_is_named_by_memory_show(kind: str, work: Path, arreio_env) -> None:
    make(work / ".arreio" / "MEMORY.md", kind)
    run = run_cli(work, arreio_env, "run", "list the files", "--offline", "--output", "text", timeout=TIMEOUT)
    assert run.returncode == 0, run.stderr[-2000:]
    assert_refused(run_cli(work, arreio_env, "memory", "show", timeout=TIMEOUT), says=f"MEMORY.md is {REASON[kind]}")


@pytest.mark.parametrize("kind", JSON_KINDS)
def test_a_bad_usage_sidecar_leaves_the_run_going_and_is_named(kind: str, work: Path, arreio_env) -> None:
    skills = work / ".arreio" / "skills"
    (skills / "good").mkdir(parents=True)
    (skills / "good" / "SKILL.md").write_text(GOOD_SKILL)
    make(skills / ".usage.json", kind)
    run = run_cli(work, arreio_env, "run", "list the files", "--offline", "--output", "text", timeout=TIMEOUT)
    assert run.returncode == 0, run.stderr[-2000:]
    listing = run_cli(work, arreio_env, "skills", "list", timeout=TIMEOUT)
    assert_refused(listing, says=".usage.json")
    assert REASON[kind] in listing.stderr


@pytest.mark.parametrize("kind", SPECIAL)
def test_a_bad_audit_journal_is_named_by_audit_and_does_not_stop_a_run(kind: str, work: Path, arreio_env) -> None:
    journal = work / ".arreio" / "audit.jsonl"
    journal.unlink()
    make(journal, kind)
    for command in (["audit", "verify"], ["audit", "tail"]):
        result = run_cli(work, arreio_env, *command, timeout=TIMEOUT)
        assert_refused(result, says=f"cannot read the audit journal {journal}: {REASON[kind]}")
    if kind in ("fifo", "sparse"):  # a device cannot be written to as a journal either; a run says so and goes on
        run = run_cli(work, arreio_env, "run", "list the files", "--offline", "--output", "text", timeout=TIMEOUT)
        assert run.returncode == 0, run.stderr[-2000:]
        assert "Traceback" not in run.stderr and "internal error" not in run.stderr


def test_a_50k_deep_audit_line_is_a_broken_line_not_a_crash(work: Path, arreio_env) -> None:
    journal = work / ".arreio" / "audit.jsonl"
    with open(journal, "a", encoding="utf-8") as handle:
        handle.write("[" * 50_000 + "]" * 50_000 + "\n")
    result = run_cli(work, arreio_env, "audit", "verify", timeout=TIMEOUT)
    assert result.returncode == 1 and "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert "BROKEN at line" in result.stdout and "not valid JSON" in result.stdout


@pytest.mark.parametrize(
    ("name", "kind"),
    [("results.jsonl", "fifo"), ("results.jsonl", "zero"), ("batch.json", "sparse"), ("batch.json", "deep-json")],
)
def test_a_bad_file_of_a_batch_is_named_when_it_is_resumed(name: str, kind: str, work: Path, arreio_env) -> None:
    (work / "suite.yaml").write_text("tasks:\n  - id: one\n    goal: read a.txt\n    model: offline\n")
    batch = run_cli(work, arreio_env, "batch", "suite.yaml", timeout=TIMEOUT)
    assert batch.returncode == 0, batch.stderr[-2000:]
    folder = next((work / ".arreio" / "batches").iterdir())
    (folder / name).unlink()
    make(folder / name, kind)
    resumed = run_cli(work, arreio_env, "batch", "--resume", folder.name, timeout=TIMEOUT)
    assert_refused(resumed, says=name)
    assert REASON[kind] in resumed.stderr
