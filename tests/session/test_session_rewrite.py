"""A rewrite (compaction) writes the lines a message got on its way in instead of
re-redacting the whole history — and still redacts, line by line, what was never redacted in this
process (a history loaded from a file an unredacted writer left, a record, the header)."""

from __future__ import annotations

from pathlib import Path

from arreio.engine.core.messages import Message, TextPart
from arreio.engine.session.file import Session, SessionHeader
from arreio.engine.walls.redact import Redactor

SECRET = "Zq8vN3xL0pR7tY2wK9mB4cD6"
ENV = {"MY_API_KEY": SECRET}


def header() -> SessionHeader:
    return SessionHeader(id="20260627-160000-bbbbbb", created_at="2026-06-27T16:00:00.000Z", cwd="/w", model="m")


def test_a_rewrite_keeps_every_secret_out_and_reloads_what_appends_wrote(tmp_path: Path) -> None:
    with Session.create(tmp_path, header()) as session:
        session.redactor = Redactor.from_env(ENV)
        session.append_many(
            [Message.user(f"use key {SECRET} — then go"), Message.assistant([TextPart(text="plain ✓")], model="m")]
        )
        session.append_record({"type": "note", "text": f"key {SECRET}"})
        session.append(Message.assistant([TextPart(text=f"done with {SECRET}")], model="m"))
        appended = Session.open(session.path)[0]
        appended.close()
        session.rewrite([Message.user("summary"), *session.messages[1:]])
    data = session.path.read_text()
    assert SECRET not in data and data.count("[REDACTED:MY_API_KEY]") == 2  # the note, the last reply
    reloaded, repairs = Session.open(session.path)
    reloaded.close()
    assert repairs == [] and reloaded.messages[1:] == appended.messages[1:]
    assert reloaded.extra == appended.extra


def test_a_history_loaded_unredacted_is_redacted_when_rewritten(tmp_path: Path) -> None:
    with Session.create(tmp_path, header()) as plain:  # no redactor: an older writer, another env
        plain.append_many(
            [Message.user(f"key {SECRET}"), Message.assistant([TextPart(text=f"echo {SECRET}")], model="m")]
        )
    session, _ = Session.open(plain.path)
    with session:
        session.redactor = Redactor.from_env(ENV)
        session.rewrite(list(session.messages))
    assert SECRET not in session.path.read_text()
    reloaded, _ = Session.open(plain.path)
    reloaded.close()
    assert [m.text for m in reloaded.messages] == ["key [REDACTED:MY_API_KEY]", "echo [REDACTED:MY_API_KEY]"]


def test_a_record_is_rewritten_as_it_was_appended_whatever_the_caller_does_with_its_dict(tmp_path: Path) -> None:
    with Session.create(tmp_path, header()) as session:
        session.redactor = Redactor.from_env(ENV)
        note = {"type": "note", "text": f"first {SECRET}"}
        session.append(Message.user("go"))
        session.append_record(note)
        note["text"] = "changed"  # a caller kept the dict and changed it: the session holds its own copy
        session.rewrite(list(session.messages))
    data = session.path.read_text()
    assert '"first [REDACTED:MY_API_KEY]"' in data and SECRET not in data and '"changed"' not in data


def test_redacted_json_hides_what_the_history_holds_whichever_way_it_came(tmp_path: Path) -> None:
    """A compaction archives the head from `redacted_json`: a message appended here gives the line it
    was stored as; one loaded from a file an unredacted writer left is redacted on the spot."""
    with Session.create(tmp_path, header()) as plain:
        plain.append(Message.user(f"loaded {SECRET}"))
    session, _ = Session.open(plain.path)
    with session:
        session.redactor = Redactor.from_env(ENV)
        session.append(Message.assistant([TextPart(text=f"appended {SECRET}")], model="m"))
        shown = [session.redacted_json(m) for m in session.messages]
        clean = Message.user("nothing to hide")
        session.append(clean)
        assert session.redacted_json(clean) == clean.model_dump_json()
    assert all(SECRET not in text and "[REDACTED:MY_API_KEY]" in text for text in shown)
    assert [Message.model_validate_json(t).text for t in shown] == [
        "loaded [REDACTED:MY_API_KEY]",
        "appended [REDACTED:MY_API_KEY]",
    ]
    assert SECRET in session.messages[0].text  # the history in memory keeps what the model saw
