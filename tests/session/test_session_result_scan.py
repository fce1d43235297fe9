"""A tool result whose content the run's redactor found clean on its way into the history
is stored without scanning its line again — and everything else still is: a result that held a
secret, one the redactor never saw, one whose call id or name holds a secret, a user message."""

from __future__ import annotations

import json
from pathlib import Path

from arreio.engine.core.messages import Message, ToolResultPart
from arreio.engine.session.file import Session, SessionHeader
from arreio.engine.walls.redact import Redactor

SECRET = "Zq8vN3xL0pR7tY2wK9mB4cD6"
BODY = "\n".join(f"{i:>6}\tline {i}: the quick brown fox\tjumps over the lazy dog" for i in range(1, 40))


class CountingRedactor(Redactor):
    """The real redactor, counting the lines it scans (a fake that adds a counter, nothing else)."""

    lines = 0

    def bytes(self, data: bytes) -> bytes:
        type(self).lines += 1
        return super().bytes(data)


def _result(content: str, call_id: str = "call_1", name: str = "read_file") -> Message:
    return Message.tool_result(ToolResultPart(call_id=call_id, name=name, content=content))


def _session(tmp_path: Path) -> tuple[Session, CountingRedactor]:
    header = SessionHeader(id="20260627-160000-cccccc", created_at="2026-06-27T16:00:00.000Z", cwd="/w", model="m")
    session = Session.create(tmp_path, header)
    redactor = CountingRedactor({"MY_API_KEY": SECRET})
    session.redactor = redactor
    CountingRedactor.lines = 0
    return session, redactor


def test_a_result_found_clean_as_it_came_in_is_not_scanned_again(tmp_path: Path) -> None:
    session, redactor = _session(tmp_path)
    with session:
        content = redactor.text(BODY)  # what RedactResults does as the result enters the history
        assert content is BODY and redactor.known_clean(content)
        session.append(_result(content))
        assert CountingRedactor.lines == 0
        session.append(_result(BODY + " "))  # equal text, another object the redactor never saw: scanned
        assert CountingRedactor.lines == 1
    lines = [json.loads(line) for line in session.path.read_text().splitlines()[1:]]
    assert [line["parts"][0]["content"] for line in lines] == [BODY, BODY + " "]


def test_what_may_hold_a_secret_is_still_hidden(tmp_path: Path) -> None:
    session, redactor = _session(tmp_path)
    with session:
        clean = redactor.text(BODY)
        leaked = redactor.text(BODY + f"\nkey={SECRET}")  # redacted on the way in: a new text
        session.append(_result(leaked))
        session.append(_result(clean, call_id=f"call_{SECRET}"))  # a provider's id is not trusted
        session.append(_result(clean, name=f"tool_{SECRET}"))
        session.append(_result(BODY + f"\n{SECRET}"))  # never seen by the redactor
        session.append(Message.user(f"{BODY} {SECRET}"))
    data = session.path.read_text()
    assert SECRET not in data and data.count("[REDACTED:MY_API_KEY]") == 5
    for line in data.splitlines():
        json.loads(line)  # every line whole


def test_a_record_the_caller_redacted_is_not_scanned_again_unless_another_redactor_did(tmp_path: Path) -> None:
    session, redactor = _session(tmp_path)
    with session:
        session.append_record(
            {"type": "request", "model": redactor.text(f"m-{SECRET}"), "tools": ["read_file"]}, redacted_by=redactor
        )
        assert CountingRedactor.lines == 0
        other = Redactor({"MY_API_KEY": SECRET})
        session.append_record({"type": "request", "model": f"m-{SECRET}"}, redacted_by=other)  # not this session's
        assert CountingRedactor.lines == 1
        given = {"type": "note", "text": "plain"}
        session.append_record(given, redacted_by=redactor)
        given["text"] = f"now {SECRET}"  # the caller's dict changed afterwards: the session kept its copy
        session.rewrite(list(session.messages))
    data = session.path.read_text()
    assert SECRET not in data and data.count("[REDACTED:MY_API_KEY]") == 2
    assert '{"type":"note","text":"plain"}' in data and session.extra[-1] == {"type": "note", "text": "plain"}


def test_a_record_changed_after_loading_is_scanned_again_when_rewritten(tmp_path: Path) -> None:
    session, redactor = _session(tmp_path)
    with session:
        session.append_record({"type": "note", "text": "plain"}, redacted_by=redactor)
    loaded, _ = Session.open(session.path)
    loaded.redactor = redactor
    with loaded:
        loaded.extra[-1]["text"] = f"now {SECRET}"  # a record read back from the file is a plain dict
        loaded.rewrite(list(loaded.messages))
    data = session.path.read_text()
    assert SECRET not in data and '"text":"now [REDACTED:MY_API_KEY]"' in data


def test_the_request_record_hides_a_secret_in_the_model_name(tmp_path: Path) -> None:
    """The recorder redacts the values that may hold one (the model's and tools' names) itself."""
    from arreio.engine.governance.requests import RequestRecorder
    from arreio.engine.providers.testing import FixedClock

    recorder = RequestRecorder("run-1", FixedClock(), Redactor({"MY_API_KEY": SECRET}))
    assert recorder._clean(f"litellm/x?key={SECRET}") == "litellm/x?key=[REDACTED:MY_API_KEY]"
    assert recorder._clean("read_file") == "read_file"
