"""The loader keeps calls that wait on an approval open; every other healing is unchanged."""

from __future__ import annotations

from pathlib import Path

from arreio.engine.core.messages import Message, TextPart, ToolCallPart, ToolResultPart
from arreio.engine.session.file import Session, SessionHeader
from arreio.engine.session.healing import awaiting_approval, heal

MODEL = "offline"


def round_of(*ids: str) -> Message:
    return Message.assistant([TextPart(text="go"), *(ToolCallPart(id=i, name="shell") for i in ids)], model=MODEL)


def result(call_id: str) -> Message:
    return Message.tool_result(ToolResultPart(call_id=call_id, name="shell", content="ok"))


def approval(call_id: str, status: str) -> dict:
    return {"type": "approval", "call_id": call_id, "name": "shell", "status": status, "by": "me", "at": "t"}


def test_calls_waiting_at_the_tail_stay_open() -> None:
    history = [Message.user("do"), round_of("a", "b", "c"), result("a")]
    keep = awaiting_approval(history, [approval("b", "pending")])
    assert keep == {"b", "c"}
    healed, repairs = heal(history, keep_open=keep)
    assert healed == history and repairs == []
    assert heal(healed, keep_open=keep) == (healed, [])  # idempotent


def test_without_an_approval_record_or_off_the_tail_calls_are_healed() -> None:
    history = [Message.user("do"), round_of("a", "b")]
    assert awaiting_approval(history, []) == set()
    later = [*history, Message.user("something else")]
    assert awaiting_approval(later, [approval("a", "pending")]) == set()
    _, repairs = heal(later)
    assert [r.kind for r in repairs] == ["interrupted_result", "interrupted_result"]


def test_a_decided_but_unrun_call_stays_open_across_loads(tmp_path: Path) -> None:
    header = SessionHeader(id="s1", created_at="2026-06-27T16:00:00.000Z", cwd=str(tmp_path), model=MODEL)
    session = Session.create(tmp_path, header)
    session.append(Message.user("do"))
    session.append(round_of("a"))
    session.append_record(approval("a", "pending"))
    session.append_record(approval("a", "approved"))
    session.close()
    loaded, repairs = Session.open(tmp_path / "s1.jsonl", repair=True)
    assert repairs == [] and len(loaded.messages) == 2 and loaded.extra[-1]["status"] == "approved"
    loaded.append(result("a"))
    loaded.close()
    final, repairs = Session.open(tmp_path / "s1.jsonl", repair=False)
    assert repairs == [] and final.messages[-1].tool_result_part.call_id == "a"


def test_the_session_writes_redacted_lines(tmp_path: Path) -> None:
    from arreio.engine.walls.redact import Redactor

    header = SessionHeader(id="s2", created_at="2026-06-27T16:00:00.000Z", cwd=str(tmp_path), model=MODEL)
    session = Session.create(tmp_path, header)
    session.redactor = Redactor({"TOKEN": "abcdefgh12345678"})
    session.append(Message.user('my "token" is abcdefgh12345678'))
    session.rewrite(list(session.messages))
    session.close()
    text = (tmp_path / "s2.jsonl").read_text()
    assert "abcdefgh12345678" not in text and "[REDACTED:TOKEN]" in text
    assert Session.open(tmp_path / "s2.jsonl", repair=False)[1] == []
