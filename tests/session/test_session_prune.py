"""Pruning is an appended `prune` line (session format 2), not a rewrite of the file; the
session keeps the request digest incrementally. The loader (and healing) must read prune lines back;
format-1 files still load untouched and are rewritten as format 2 the first time they are pruned."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from arreio.engine.core.messages import Message, TextPart, ToolCallPart, ToolResultPart
from arreio.engine.governance.requests import messages_digest, reconstruct
from arreio.engine.session.file import CURRENT_VERSION, Session, SessionHeader
from arreio.engine.session.healing import check_pairing
from arreio.engine.walls.redact import Redactor

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "sessions"
MODEL = "anthropic/claude-sonnet-4-5"


def header(sid: str = "20260627-160000-aaaaaa") -> SessionHeader:
    return SessionHeader(id=sid, created_at="2026-06-27T16:00:00.000Z", cwd="/w", model=MODEL)


def rounds(n: int, start: int = 0) -> list[Message]:
    out: list[Message] = []
    for i in range(start, start + n):
        call = ToolCallPart(id=f"c{i}", name="read_file", arguments={"path": f"f{i}.txt"})
        out += [
            Message.assistant([TextPart(text=f"reading {i}"), call], model=MODEL),
            Message.tool_result(ToolResultPart(call_id=call.id, name="read_file", content=f"body {i}\n" * 50)),
        ]
    return out


def test_a_prune_is_one_appended_line_and_survives_reload(tmp_path: Path) -> None:
    with Session.create(tmp_path, header()) as session:
        session.append_many([Message.user("go"), *rounds(4)])
        before = session.path.read_bytes()
        session.replace_results({2: "[pruned 0]", 6: "[pruned 2]"})
        after = session.path.read_bytes()
    assert after.startswith(before)  # nothing rewritten: one line more
    added = after[len(before) :].decode().splitlines()
    assert [json.loads(line)["type"] for line in added] == ["prune"]
    reloaded, repairs = Session.open(session.path)
    reloaded.close()
    assert repairs == [] and reloaded.messages == session.messages
    assert [m.tool_result_part.content for m in reloaded.messages if m.role == "tool"][:3] == [
        "[pruned 0]",
        "body 1\n" * 50,
        "[pruned 2]",
    ]
    assert check_pairing(reloaded.messages) == []


def test_prune_lines_survive_healing_and_a_torn_prune_line_is_only_a_torn_tail(tmp_path: Path) -> None:
    with Session.create(tmp_path, header()) as session:
        session.append_many([Message.user("go"), *rounds(3)])
        session.replace_results({2: "[pruned 0]"})
        session.append(Message.assistant([ToolCallPart(id="late", name="shell")], model=MODEL))  # no result
    with open(session.path, "ab") as handle:  # a crash while writing the next prune
        handle.write(b'{"type":"prune","results":[{"at":4,"call_id":"c1","content":"[pru')
    healed, repairs = Session.open(session.path)
    healed.close()
    assert sorted(r.kind for r in repairs) == ["interrupted_result", "torn_tail"]
    assert healed.messages[2].tool_result_part.content == "[pruned 0]"  # the whole prune line still applies
    assert healed.messages[4].tool_result_part.content == "body 1\n" * 50  # the torn one does not
    again, more = Session.open(session.path)  # healing wrote the file back, stubs baked in: idempotent
    again.close()
    assert more == [] and again.messages == healed.messages


def test_a_format_1_file_loads_untouched_and_becomes_the_current_format_when_first_pruned(tmp_path: Path) -> None:
    path = tmp_path / "clean.jsonl"
    shutil.copy(FIXTURES / "clean-multi-turn" / "session.jsonl", path)
    original = path.read_bytes()
    session, repairs = Session.open(path)
    assert repairs == [] and path.read_bytes() == original and session.version == 1
    first_result = next(i for i, m in enumerate(session.messages) if m.role == "tool")
    session.replace_results({first_result: "[pruned]"})
    session.append(Message.user("more"))
    session.close()
    assert json.loads(path.read_text().splitlines()[0])["version"] == CURRENT_VERSION
    reloaded, again = Session.open(path)
    reloaded.close()
    assert again == [] and reloaded.messages == session.messages
    assert reloaded.messages[first_result].tool_result_part.content == "[pruned]"


def test_the_frozen_format_2_fixture_loads_with_its_stub(tmp_path: Path) -> None:
    path = tmp_path / "pruned.jsonl"
    shutil.copy(FIXTURES / "pruned-v2" / "session.jsonl", path)
    session, repairs = Session.open(path)
    session.close()
    clean, _ = Session.open(FIXTURES / "clean-multi-turn" / "session.jsonl", repair=False)
    assert repairs == [] and len(session.messages) == len(clean.messages) == 13
    assert session.messages[2].tool_result_part.content.startswith("[pruned to save context:")
    assert session.messages[3:] == clean.messages[3:] and session.extra == clean.extra


def test_a_prune_naming_a_moved_or_missing_result_is_applied_by_call_id_or_skipped(tmp_path: Path) -> None:
    with Session.create(tmp_path, header()) as session:
        session.append_many([Message.user("go"), *rounds(2)])
        with open(session.path, "ab") as handle:  # an index that no longer fits (history rewritten since)
            handle.write(
                b'{"type":"prune","results":[{"at":1,"call_id":"c1","content":"[by id]"},'
                b'{"at":2,"call_id":"gone","content":"[nothing]"}]}\n'
            )
    reloaded, repairs = Session.open(session.path)
    reloaded.close()
    assert repairs == []
    assert [m.tool_result_part.content for m in reloaded.messages if m.role == "tool"] == ["body 0\n" * 50, "[by id]"]


def test_the_incremental_digest_equals_the_full_one_through_appends_prunes_and_rewrites(tmp_path: Path) -> None:
    redactor = Redactor.from_env({"MY_API_KEY": "sk-live-0123456789abcdefghij"})
    with Session.create(tmp_path, header(), redactor=redactor) as session:
        session.append(Message.user("use sk-live-0123456789abcdefghij please"))
        assert b"sk-live" not in session.path.read_bytes()  # redacted once, on the way in
        for k in range(0, 150, 10):
            session.append_many(rounds(10, start=k))
            assert session.messages_digest(list(session.messages)) == messages_digest(session.messages, redactor)
        session.replace_results({4: "[stub a] sk-live-0123456789abcdefghij", 200: "[stub b]"})
        assert session.messages_digest(list(session.messages)) == messages_digest(session.messages, redactor)
        session.append_many(rounds(3, start=500))
        session.replace_results({290: "[stub c]"})
        assert session.messages_digest(list(session.messages)) == messages_digest(session.messages, redactor)
        session.rewrite(session.messages[99:])  # from an assistant turn: pairing whole
        assert session.messages_digest(list(session.messages)) == messages_digest(session.messages, redactor)
        assert session.messages_digest(session.messages[:-1]) is None  # not the history: the caller computes it
    reloaded, _ = Session.open(session.path)
    reloaded.close()
    assert messages_digest(reloaded.messages) == messages_digest(
        session.messages, redactor
    )  # digests name what the file holds


def test_reconstruct_shows_each_request_before_and_after_a_prune(tmp_path: Path) -> None:
    with Session.create(tmp_path, header()) as session:
        session.append_many([Message.user("go"), *rounds(2)])
        digest = session.messages_digest(list(session.messages))
        session.append_record({"type": "request", "messages": 5, "messages_digest": digest, "system_digest": "x"})
        session.replace_results({2: "[pruned]"})
        digest = session.messages_digest(list(session.messages))
        session.append_record({"type": "request", "messages": 5, "messages_digest": digest, "system_digest": "x"})
    first, second = reconstruct(session.path)
    assert first["messages"][2]["parts"][0]["content"] == "body 0\n" * 50
    assert second["messages"][2]["parts"][0]["content"] == "[pruned]"


def test_unchanged_prefix_tells_how_much_of_the_history_a_reader_can_keep(tmp_path: Path) -> None:
    with Session.create(tmp_path, header()) as session:
        session.append_many(rounds(5))
        start = session.revision
        assert session.unchanged_prefix(start) == 10
        session.replace_results({7: "[a]"})
        session.replace_results({3: "[b]"})
        assert session.unchanged_prefix(start) == 3 and session.unchanged_prefix(start + 1) == 3
        assert session.unchanged_prefix(session.revision) == 10
        with pytest.raises(ValueError, match="not a tool result"):
            session.replace_results({0: "x"})


def test_the_digest_hashes_a_moved_tail_again_without_serialising_it_again() -> None:
    """A compaction puts its summary in front of the kept tail: every position changes, no message
    does (the tail was serialised and escaped again after each compaction)."""
    from arreio.engine.session.digest import RollingDigest, escaped

    made: list[Message] = []

    def form(message: Message) -> bytes:
        made.append(message)
        return escaped(message.model_dump_json())

    history = [Message.user(f"message {i}") for i in range(100)]
    rolling = RollingDigest(form)
    rolling.digest(history)
    summary = Message.user("summary of the first 60")
    compacted = [summary, *history[60:]]
    rolling.rewind(0)
    made.clear()
    full = RollingDigest()
    assert rolling.digest(compacted) == full.digest(compacted)
    assert made == [summary]


def test_a_stored_line_escapes_as_its_json_does() -> None:
    """The digest escapes a message's stored line as bytes: the same bytes as escaping its
    JSON text, whatever the text holds."""
    from arreio.engine.session.digest import escaped, escaped_line
    from arreio.engine.session.format import json_of_line, message_line

    texts = [
        "plain",
        'quote " and \\ backslash \\"',
        "tab\tnew\nline\r\x00\x1f bell\x07",
        "é — → 中文 🙂",
        '{"json": "inside", "esc": "\\u00e9"}',
        "\u2028\u2029 line separators",
        "trailing \\",
    ]
    for text in texts:
        for message in (Message.user(text), Message.tool_result(ToolResultPart(call_id="c", name="t", content=text))):
            line = message_line(message)
            assert escaped_line(line) == escaped(json_of_line(line)) == escaped(message.model_dump_json())
    # a line json.dumps would not write
    odd = b'{"type":"message","role":"user","parts":[{"type":"text","text":"raw\ttab"}]}\n'
    assert escaped_line(odd) == escaped(json_of_line(odd))
