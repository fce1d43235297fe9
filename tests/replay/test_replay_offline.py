"""Record an offline (or scripted) run, replay it in another folder: same events, same files; a changed
request fails a strict replay naming what changed, and passes a lenient one with a warning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arreio.engine.providers.cassette import load_cassette
from tests.replay.cassette_helpers import normalised

GOAL = "fixtures/goals/quickstart.md"
SUMMARY = Path("build/quickstart-summary.md")


@pytest.fixture
def recorded(project, arreio, tmp_path: Path):
    """The quickstart recorded offline in folder `rec`; returns (cassette path, the run's result)."""
    project("rec")
    cassette = tmp_path / "cassettes" / "quickstart.cassette.jsonl"
    result = arreio("run", "--goal", GOAL, "--offline", "--record", str(cassette), "--json")
    assert result.code == 0, result.stderr
    return cassette, result


def test_offline_run_replays_with_identical_events_and_files(recorded, project, arreio) -> None:
    cassette, first = recorded
    recorded_summary = SUMMARY.read_bytes()
    tape = load_cassette(cassette)
    assert tape.header.version == 1 and tape.header.model == "offline"
    assert len(tape.calls) == first.done["steps"] == 4

    work = project("replay")
    assert not (work / SUMMARY).exists()
    again = arreio("run", "--goal", GOAL, "--replay", str(cassette), "--json")
    assert again.code == 0, again.stderr
    assert normalised(again.events) == normalised(first.events)
    assert again.of("warning") == []
    assert (work / SUMMARY).read_bytes() == recorded_summary  # the tool calls ran for real
    report = json.loads((work / again.done["report_path"]).read_text())
    assert report["model"] == "offline" and report["verdict"] == "success" and report["cost_usd"] == 0.0


def test_a_new_memory_block_fails_strict_replay_naming_it(recorded, project, arreio) -> None:
    cassette, _ = recorded
    work = project("replay")
    (work / ".arreio" / "MEMORY.md").write_text("The team prefers short summaries.\n")
    result = arreio("run", "--goal", GOAL, "--replay", str(cassette), "--json")
    assert result.code == 1
    message = result.done["message"]
    assert "the request to the model changed: the system prompt gained block 'memory'" in message
    assert "(call 1 of 4)" in message
    assert not (work / SUMMARY).exists()  # stopped at the first call, before any tool ran


def test_an_edited_memory_entry_names_the_block_that_differs(project, arreio, tmp_path: Path) -> None:
    rec = project("rec")
    (rec / ".arreio" / "MEMORY.md").write_text("The team prefers short summaries.\n")
    cassette = tmp_path / "m.cassette.jsonl"
    assert arreio("run", "--goal", GOAL, "--offline", "--record", str(cassette), "--json").code == 0
    work = project("replay")
    (work / ".arreio" / "MEMORY.md").write_text("The team prefers long summaries.\n")
    result = arreio("run", "--goal", GOAL, "--replay", str(cassette), "--json")
    assert result.code == 1
    assert "the request to the model changed: the system prompt's block 'memory' differs" in result.done["message"]


def test_lenient_replay_passes_with_a_warning(recorded, project, arreio) -> None:
    cassette, first = recorded
    work = project("replay")
    (work / ".arreio" / "MEMORY.md").write_text("The team prefers short summaries.\n")
    result = arreio("run", "--goal", GOAL, "--replay", str(cassette), "--replay-mode", "lenient", "--json")
    assert result.code == 0, result.stderr
    warnings = [w for w in result.of("warning") if w["code"] == "replay"]
    assert len(warnings) == 4  # every call's request carried the new block
    assert "system prompt gained block 'memory'" in warnings[0]["message"] and "lenient" in warnings[0]["message"]
    assert normalised(result.events) == normalised(first.events)
    report = json.loads((work / result.done["report_path"]).read_text())
    assert any("gained block 'memory'" in w for w in report["warnings"])


def test_a_changed_tool_result_names_the_message(recorded, project, arreio) -> None:
    cassette, _ = recorded
    work = project("replay")
    (work / "fixtures" / "quickstart" / "notes.md").write_text("# Notes\n\nRewritten since the recording.\n")
    result = arreio("run", "--goal", GOAL, "--replay", str(cassette), "--json")
    assert result.code == 1
    # history: 1 goal, 2 list_dir call, 3 its result, 4 two read_file calls, 5 notes.md result, 6 todo.md result
    assert "message 5 (tool result of read_file) differs" in result.done["message"]
    assert "(call 3 of 4)" in result.done["message"]


def test_tools_offered_differ(recorded, project, arreio) -> None:
    cassette, _ = recorded
    project("replay")
    result = arreio("run", "--goal", GOAL, "--replay", str(cassette), "--no-tools", "shell,grep", "--json")
    assert result.code == 1
    assert "tools offered differ: - grep, - shell" in result.done["message"]


def test_a_different_goal_names_the_user_message(recorded, project, arreio) -> None:
    cassette, _ = recorded
    work = project("replay")
    (work / GOAL).write_text((work / GOAL).read_text() + "\nKeep it under a page.\n")
    result = arreio("run", "--goal", GOAL, "--replay", str(cassette), "--json")
    assert result.code == 1 and "message 1 (user message) differs" in result.done["message"]


def test_a_run_that_needs_more_calls_than_recorded_fails(project, arreio, tmp_path: Path) -> None:
    project("rec")
    script = tmp_path / "one.yaml"
    script.write_text("- text: Nothing to do.\n")
    cassette = tmp_path / "one.cassette.jsonl"
    assert arreio("run", "--goal", "G.md", "--script", str(script), "--record", str(cassette), "--json").code == 0
    project("replay")
    # a tool call spliced into the recorded reply makes the run ask a second time
    lines = cassette.read_text().splitlines()
    call = json.loads(lines[1])
    call["events"].insert(0, {"type": "tool_call", "id": "c1", "name": "list_dir", "arguments": {"path": "."}})
    call["events"][-1]["stop_reason"] = "tool_use"
    cassette.write_text(lines[0] + "\n" + json.dumps(call) + "\n")
    result = arreio("run", "--goal", "G.md", "--replay", str(cassette), "--json")
    assert result.code == 1 and "the cassette ran out" in result.done["message"]


def test_unreplayed_calls_are_reported(recorded, project, arreio) -> None:
    cassette, _ = recorded
    lines = cassette.read_text().splitlines()
    extra = json.loads(lines[-1]) | {"n": len(lines)}  # a call the run will never ask for
    cassette.write_text("\n".join([*lines, json.dumps(extra)]) + "\n")
    work = project("replay")
    result = arreio("run", "--goal", GOAL, "--replay", str(cassette), "--json")
    assert result.code == 0, result.stderr
    warnings = [w["message"] for w in result.of("warning") if w["code"] == "replay"]
    assert warnings == [
        "the run made 4 model call(s); the cassette holds 5 (1 not replayed) — "
        "the run took a different path than the recording"
    ]
    report = json.loads((work / result.done["report_path"]).read_text())
    assert warnings[0] in report["warnings"]


def test_a_recorded_fault_replays_the_retry(project, arreio, tmp_path: Path) -> None:
    project("rec")
    script = tmp_path / "fault.yaml"
    script.write_text(
        "- error: {status: 429, message: rate limited, retry_after: 0}\n"
        "- text: Let me look.\n  tool_calls: [{name: list_dir, arguments: {path: .}}]\n"
        "- text: Done looking.\n"
    )
    cassette = tmp_path / "fault.cassette.jsonl"
    first = arreio("run", "--goal", "G.md", "--script", str(script), "--record", str(cassette), "--json")
    assert first.code == 0, first.stderr
    assert len(first.of("retry")) == 1
    tape = load_cassette(cassette)
    assert [c.fault.status if c.fault else None for c in tape.calls] == [429, None, None]
    assert tape.calls[0].fingerprint == tape.calls[1].fingerprint  # the retry asked the same thing

    project("replay")
    again = arreio("run", "--goal", "G.md", "--replay", str(cassette), "--json")
    assert again.code == 0, again.stderr
    assert len(again.of("retry")) == 1 and "rate limited" in again.of("retry")[0]["reason"]
    assert normalised(again.events) == normalised(first.events)


def test_secrets_never_enter_the_cassette(project, arreio, tmp_path: Path, monkeypatch) -> None:
    secret, token = "hunter2-correct-horse", "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2"
    monkeypatch.setenv("DEPLOY_TOKEN", secret)
    monkeypatch.setenv("SHORT_KEY", "abc")  # too short to be a secret: left alone
    work = project("rec")
    (work / "G.md").write_text(f"# Check the deploy\n\nThe deploy token is {secret}; the bot uses {token}.\n")
    script = tmp_path / "leaky.yaml"
    script.write_text(
        f"- text: 'I see {secret} and {token} in the goal.'\n"
        "  tool_calls: [{name: list_dir, arguments: {path: .}}]\n"
        f"- text: 'Done; key {secret}.'\n"
    )
    cassette = tmp_path / "leaky.cassette.jsonl"
    first = arreio("run", "--goal", "G.md", "--script", str(script), "--record", str(cassette), "--json")
    assert first.code == 0, first.stderr
    text = cassette.read_text()
    assert secret not in text and token not in text
    assert "[redacted:DEPLOY_TOKEN]" in text and "[redacted:token]" in text
    # redaction is applied before hashing too, so the redacted reply still replays strictly
    replay = project("replay")
    (replay / "G.md").write_text((work / "G.md").read_text())
    again = arreio("run", "--goal", "G.md", "--replay", str(cassette), "--json")
    assert again.code == 0, again.done["message"]
    assert "[redacted:DEPLOY_TOKEN]" in again.done["final_text"]


def test_record_while_replaying_rewrites_an_identical_cassette(recorded, project, arreio, tmp_path: Path) -> None:
    cassette, _ = recorded
    project("replay")
    copy = tmp_path / "again.cassette.jsonl"
    result = arreio("run", "--goal", GOAL, "--replay", str(cassette), "--record", str(copy), "--json")
    assert result.code == 0, result.stderr
    old, new = load_cassette(cassette), load_cassette(copy)
    assert [c.fingerprint for c in old.calls] == [c.fingerprint for c in new.calls]
    assert [c.reply_digest for c in old.calls] == [c.reply_digest for c in new.calls]


def test_bad_cassettes_are_one_line_usage_errors(project, arreio, tmp_path: Path) -> None:
    project("replay")
    missing = arreio("run", "--goal", GOAL, "--replay", str(tmp_path / "nope.jsonl"))
    assert missing.code == 2 and "cassette not found" in missing.stderr
    (tmp_path / "bad.jsonl").write_text('{"type":"session"}\n')
    bad = arreio("run", "--goal", GOAL, "--replay", str(tmp_path / "bad.jsonl"))
    assert bad.code == 2 and "not an arreio cassette" in bad.stderr and "Traceback" not in bad.stderr
    both = arreio("run", "--goal", GOAL, "--replay", str(tmp_path / "bad.jsonl"), "--offline")
    assert both.code == 2


def test_recording_over_the_cassette_being_replayed_is_refused(recorded, project, arreio, tmp_path: Path) -> None:
    """Regression: `--replay C --record C` with another goal failed the replay and left a one-call
    cassette (the fault) where the recording had been. Refused before anything runs; the cassette
    stays as it was, also when named through a symlink."""
    cassette, _ = recorded
    kept = cassette.read_bytes()
    project("again")
    link = tmp_path / "link.cassette.jsonl"
    link.symlink_to(cassette)
    for record in (str(cassette), str(link)):
        refused = arreio("run", "--goal", "G.md", "--replay", str(cassette), "--record", record)
        assert refused.code == 2 and "is the cassette --replay reads" in refused.stderr, refused.stderr
        assert cassette.read_bytes() == kept
    copy = tmp_path / "re-recorded.cassette.jsonl"  # to another file: a replay re-recorded, as before
    again = arreio("run", "--goal", GOAL, "--replay", str(cassette), "--record", str(copy))
    assert again.code == 0, again.stderr
    assert len(load_cassette(copy).calls) == len(load_cassette(cassette).calls)
