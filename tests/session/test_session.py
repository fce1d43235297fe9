"""The JSONL session on real files: round-trip, crash repair, healing on load, store listing.

Fixtures under `fixtures/sessions/<edge-case>/session.jsonl` are frozen v1 files; every test copies
the one it needs into a temp folder first, because opening with `repair=True` rewrites the file.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arreio.engine.core.errors import SessionError
from arreio.engine.core.messages import Message, TextPart, ToolCallPart, ToolResultPart
from arreio.engine.core.model_io import SystemBlock
from arreio.engine.session.file import CURRENT_VERSION, Session, SessionHeader
from arreio.engine.session.healing import check_pairing
from arreio.engine.session.store import SessionStore

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "sessions"
CLEAN = FIXTURES / "clean-multi-turn" / "session.jsonl"
MODEL = "anthropic/claude-sonnet-4-5"


def header(session_id: str = "20260627-160000-aaaaaa", created_at: str = "2026-06-27T16:00:00.000Z") -> SessionHeader:
    return SessionHeader(
        id=session_id,
        created_at=created_at,
        cwd="/home/ana/proj",
        model=MODEL,
        title="a title",
        system=[
            SystemBlock(name="identity", text="You are arreio."),
            SystemBlock(name="time", text="now", stable=False),
        ],
    )


def copy_fixture(case: str, directory: Path) -> Path:
    target = directory / f"{case}.jsonl"
    shutil.copyfile(FIXTURES / case / "session.jsonl", target)
    return target


def open_closed(path: Path, *, repair: bool = True):
    session, repairs = Session.open(path, repair=repair)
    session.close()
    return session, repairs


def kinds(repairs) -> list[str]:
    return [r.kind for r in repairs]


# -- round trip -----------------------------------------------------------------------------------
def test_round_trip_keeps_header_messages_and_run_markers(tmp_path):
    messages = [
        Message.user("hello — ünïcode ✓"),
        Message.assistant(
            [TextPart(text="checking"), ToolCallPart(id="c1", name="shell", arguments={"command": "ls", "n": [1, 2]})],
            model=MODEL,
        ),
        Message.tool_result(ToolResultPart(call_id="c1", name="shell", content="a\nb", is_error=True, status="error")),
        Message.assistant([TextPart(text="done")], model=MODEL),
    ]
    with Session.create(tmp_path / "sessions", header()) as session:
        session.mark_run("run-1", "start", "2026-06-27T16:00:01.000Z")
        session.append(messages[0])
        session.append(messages[1])
        session.append_many(messages[2:])
        session.mark_run("run-1", "end", "2026-06-27T16:00:09.000Z", verdict="passed")
    path = tmp_path / "sessions" / "20260627-160000-aaaaaa.jsonl"
    assert session.path == path

    loaded, repairs = open_closed(path)
    assert repairs == []
    assert loaded.header == header()
    assert loaded.id == "20260627-160000-aaaaaa"
    assert loaded.messages == messages
    assert [(r["event"], r.get("verdict")) for r in loaded.runs] == [("start", None), ("end", "passed")]
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and all(json.loads(line) for line in lines[:-1])
    assert json.loads(lines[0])["type"] == "header" and json.loads(lines[0])["version"] == CURRENT_VERSION


def test_create_refuses_an_existing_session(tmp_path):
    Session.create(tmp_path, header()).close()
    with pytest.raises(SessionError, match="already exists"):
        Session.create(tmp_path, header())


def test_clean_fixture_loads_without_repairs_and_untouched(tmp_path):
    path = copy_fixture("clean-multi-turn", tmp_path)
    before = path.read_bytes()
    session, repairs = open_closed(path)
    assert repairs == []
    assert path.read_bytes() == before
    assert check_pairing(session.messages) == []
    assert len(session.messages) == 13
    assert session.header.system[1].stable is False


# -- crash repair -----------------------------------------------------------------------------------
def test_torn_last_line_is_dropped_and_the_next_append_lands_on_its_own_line(tmp_path):
    path = copy_fixture("torn-tail", tmp_path)
    complete = path.read_bytes().rsplit(b"\n", 1)[0] + b"\n"
    session, repairs = Session.open(path)
    assert kinds(repairs) == ["torn_tail"]
    assert repairs[0].line == len(complete.split(b"\n"))
    assert path.read_bytes() == complete  # truncated to the last whole line
    with session:
        session.append(Message.user("carry on"))
    reloaded, again = open_closed(path)
    assert again == []
    assert reloaded.messages == session.messages
    assert reloaded.messages[-1].text == "carry on"


def test_torn_tail_read_only_leaves_the_file_alone_and_refuses_writes(tmp_path):
    path = copy_fixture("torn-tail", tmp_path)
    before = path.read_bytes()
    session, repairs = Session.open(path, repair=False)
    assert kinds(repairs) == ["torn_tail"]
    assert path.read_bytes() == before
    with pytest.raises(SessionError, match="read-only"):
        session.append(Message.user("no"))


def test_whole_last_line_without_newline_is_kept(tmp_path):
    path = copy_fixture("clean-multi-turn", tmp_path)
    path.write_bytes(path.read_bytes()[:-1])  # drop only the final newline
    session, repairs = open_closed(path)
    assert kinds(repairs) == ["torn_tail"]
    assert [r["event"] for r in session.runs] == ["start", "end"]
    assert path.read_bytes().endswith(b"}\n")
    assert open_closed(path)[1] == []


def test_bad_middle_line_is_skipped_without_losing_later_lines(tmp_path):
    path = copy_fixture("bad-middle-line", tmp_path)
    session, repairs = open_closed(path)
    assert kinds(repairs) == ["bad_line_skipped"]
    assert repairs[0].line == 5
    clean, _ = open_closed(copy_fixture("clean-multi-turn", tmp_path))
    assert session.messages == clean.messages  # every good line after the bad one survived
    assert open_closed(path)[1] == []  # repaired on disk
    original = (FIXTURES / "bad-middle-line" / "session.jsonl").read_bytes()
    assert (tmp_path / "bad-middle-line.jsonl.bak").read_bytes() == original


def test_append_after_someone_left_a_partial_line_starts_a_fresh_line(tmp_path):
    # Another writer (an old arreio, a crash elsewhere) tore the file after we loaded it cleanly.
    with Session.create(tmp_path, header()) as session:
        with open(session.path, "ab") as other:
            other.write(b'{"type":"message","role":"user","parts":[{"type":"text","text":"one"}]}\n{"type":"mess')
        session.append(Message.user("two"))
    reloaded, repairs = open_closed(session.path)
    assert kinds(repairs) == ["bad_line_skipped"]
    assert [m.text for m in reloaded.messages] == ["one", "two"]


# -- healing on load ---------------------------------------------------------------------------------
def test_orphan_call_gets_an_interrupted_result_on_disk_too(tmp_path):
    path = copy_fixture("orphan-call", tmp_path)
    session, repairs = open_closed(path)
    assert kinds(repairs) == ["interrupted_result", "interrupted_result"]
    tail = [m.tool_result_part for m in session.messages[-3:]]
    assert [(p.call_id, p.status) for p in tail] == [
        ("toolu_04", "ok"),
        ("toolu_05", "interrupted"),
        ("toolu_06", "interrupted"),
    ]
    assert check_pairing(session.messages) == []
    reloaded, again = open_closed(path)
    assert again == [] and reloaded.messages == session.messages


def test_orphan_result_is_dropped(tmp_path):
    session, repairs = open_closed(copy_fixture("orphan-result", tmp_path))
    assert kinds(repairs) == ["orphan_result_dropped"]
    assert all(m.tool_result_part.call_id != "toolu_99" for m in session.messages if m.role == "tool")


def test_results_are_reordered_to_call_order(tmp_path):
    path = copy_fixture("reordered-results", tmp_path)
    session, repairs = open_closed(path)
    assert repairs and set(kinds(repairs)) == {"reordered"}
    clean, _ = open_closed(copy_fixture("clean-multi-turn", tmp_path))
    assert session.messages == clean.messages
    assert open_closed(path)[1] == []


def test_duplicate_result_is_dropped(tmp_path):
    session, repairs = open_closed(copy_fixture("duplicate-result", tmp_path))
    assert kinds(repairs) == ["duplicate_result_dropped"]
    assert check_pairing(session.messages) == []


def test_run_markers_stay_next_to_their_messages_through_a_repair(tmp_path):
    with Session.create(tmp_path, header()) as session:
        session.append(Message.user("go"))
        session.append(Message.assistant([ToolCallPart(id="c1", name="shell")], model=MODEL))
        session.mark_run("run-1", "end", "t", verdict="cancelled")  # crashed before the result landed
        session.mark_run("run-2", "start", "t")
        session.append(Message.user("again"))
    open_closed(session.path)
    records = [json.loads(line) for line in session.path.read_text().splitlines()]
    kinds_in_file = [r.get("role") or r["type"] for r in records]
    assert kinds_in_file == ["header", "user", "assistant", "tool", "run", "run", "user"]


# -- format openness and versions ----------------------------------------------------------------
def test_unknown_line_types_survive_load_and_rewrite(tmp_path):
    path = copy_fixture("unknown-line-types", tmp_path)
    session, repairs = Session.open(path)
    assert repairs == []
    assert [e["type"] for e in session.extra] == ["compaction", "approval"]
    with session:
        session.rewrite(session.messages[-5:])
    reloaded, again = open_closed(path)
    assert again == []
    assert reloaded.extra == session.extra
    assert reloaded.runs == session.runs
    assert len(reloaded.messages) == 5 and reloaded.messages == session.messages
    assert reloaded.header == session.header


def test_rewrite_then_append_goes_to_the_new_file(tmp_path):
    with Session.create(tmp_path, header()) as session:
        session.append(Message.user("old"))
        session.rewrite([Message.user("summary")])
        session.append(Message.user("new"))
    reloaded, _ = open_closed(session.path)
    assert [m.text for m in reloaded.messages] == ["summary", "new"]


def test_newer_version_is_refused(tmp_path):
    with pytest.raises(SessionError, match="newer arreio"):
        Session.open(copy_fixture("newer-version", tmp_path))


@pytest.mark.parametrize(("case", "says"), [("empty", "empty"), ("no-header", "not a session header")])
def test_files_that_are_not_sessions_fail_clearly(tmp_path, case, says):
    with pytest.raises(SessionError, match=says):
        Session.open(copy_fixture(case, tmp_path))


def test_missing_file_is_a_session_error(tmp_path):
    with pytest.raises(SessionError, match="no session file"):
        Session.open(tmp_path / "nope.jsonl")


# -- property: a crash at any byte leaves a loadable, paired session --------------------------------
CLEAN_BYTES = CLEAN.read_bytes()
HEADER_END = CLEAN_BYTES.index(b"\n")  # a cut at or after this keeps the header line intact


def _complete_records(cut: int) -> tuple[list[Message], int]:
    """Messages and run markers on lines that the cut left whole (a missing final newline is fine)."""
    messages, runs, start = [], 0, HEADER_END + 1
    while start < len(CLEAN_BYTES):
        end = CLEAN_BYTES.index(b"\n", start)
        if end > cut:
            break
        record = json.loads(CLEAN_BYTES[start:end])
        if record["type"] == "message":
            messages.append(Message.model_validate(record))
        else:
            runs += 1
        start = end + 1
    return messages, runs


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cut=st.integers(min_value=HEADER_END, max_value=len(CLEAN_BYTES)))
def test_any_truncation_loads_keeps_whole_lines_and_pairs(cut):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.jsonl"
        path.write_bytes(CLEAN_BYTES[:cut])
        expected, expected_runs = _complete_records(cut)

        readonly, _ = open_closed(path, repair=False)
        session, repairs = Session.open(path)
        assert readonly.messages == session.messages
        assert set(kinds(repairs)) <= {"torn_tail", "interrupted_result"}
        assert session.messages[: len(expected)] == expected
        assert all(m.tool_result_part.status == "interrupted" for m in session.messages[len(expected) :])
        assert len(session.runs) == expected_runs
        assert check_pairing(session.messages) == []

        with session:
            session.append(Message.user("resumed"))
        reloaded, again = open_closed(path)
        assert again == []
        assert reloaded.messages == session.messages


# -- the store ------------------------------------------------------------------------------------
def make_store(tmp_path: Path) -> SessionStore:
    folder = tmp_path / "sessions"
    for session_id, created in [
        ("20260101-090000-aaaaaa", "2026-01-01T09:00:00.000Z"),
        ("20260102-090000-bbbbbb", "2026-01-02T09:00:00.000Z"),
        ("20260102-090000-bbbccc", "2026-01-02T09:00:00.500Z"),
    ]:
        with Session.create(folder, header(session_id, created)) as session:
            session.append(Message.user("hi"))
            session.mark_run("r", "end", created, verdict="passed")
    (folder / "broken.jsonl").write_text("this is not json\n")
    return SessionStore(folder)


def test_store_lists_newest_first_and_notes_corrupt_files(tmp_path):
    listed = make_store(tmp_path).list()
    assert [s.id for s in listed] == [
        "20260102-090000-bbbccc",
        "20260102-090000-bbbbbb",
        "20260101-090000-aaaaaa",
        "broken",
    ]
    good = listed[0]
    assert (good.messages, good.last_run_verdict, good.model, good.error) == (1, "passed", MODEL, None)
    assert listed[-1].error and "header" in listed[-1].error


def test_store_lists_nothing_when_the_folder_is_missing(tmp_path):
    assert SessionStore(tmp_path / "absent").list() == []


def test_store_resolves_prefixes(tmp_path):
    store = make_store(tmp_path)
    assert store.resolve("20260101") == "20260101-090000-aaaaaa"
    assert store.resolve("20260102-090000-bbbb") == "20260102-090000-bbbbbb"
    with pytest.raises(SessionError, match="ambiguous") as error:
        store.resolve("20260102")
    assert "bbbbbb" in error.value.message and "bbbccc" in error.value.message
    with pytest.raises(SessionError, match="no session 'zzz'"):
        store.resolve("zzz")


def test_store_path_for(tmp_path):
    store = make_store(tmp_path)
    assert store.path_for("20260101-090000-aaaaaa") == tmp_path / "sessions" / "20260101-090000-aaaaaa.jsonl"
    with pytest.raises(SessionError, match=r"no session 'nope' \(see `arreio sessions list`\)"):
        store.path_for("nope")
    with pytest.raises(SessionError):
        store.path_for("../sessions/20260101-090000-aaaaaa")


# -- migrations, edges ---------------------------------------------------------------------------
def test_an_older_version_is_migrated_by_one_registered_function_and_written_back(tmp_path, monkeypatch):
    import arreio.engine.session.file as session_module

    def v0_to_v1(record):  # pretend v0 called message lines "msg"
        return {**record, "type": "message"} if record.get("type") == "msg" else record

    monkeypatch.setitem(session_module._MIGRATIONS, 0, v0_to_v1)
    path = tmp_path / "old.jsonl"
    head = {"type": "header", "version": 0, "id": "old", "created_at": "t", "cwd": "/", "model": MODEL}
    line = {"type": "msg", "role": "user", "parts": [{"type": "text", "text": "from v0"}]}
    path.write_text(json.dumps(head) + "\n" + json.dumps(line) + "\nnot json\n" + json.dumps(line))
    session, repairs = open_closed(path)
    assert kinds(repairs) == ["bad_line_skipped", "torn_tail"]
    assert [m.text for m in session.messages] == ["from v0", "from v0"]
    assert json.loads(path.read_text().splitlines()[0])["version"] == CURRENT_VERSION
    assert open_closed(path)[0].messages == session.messages
    assert json.loads((tmp_path / "old.jsonl.bak").read_text().splitlines()[0])["version"] == 0


def test_unknown_old_version_is_refused(tmp_path):
    path = tmp_path / "old.jsonl"
    head = {"type": "header", "version": 0, "id": "x", "created_at": "t", "cwd": "/", "model": "m"}
    path.write_text(json.dumps(head) + "\n")
    with pytest.raises(SessionError, match="unknown session format version 0"):
        Session.open(path)


def test_header_only_file_without_newline_loads_and_gets_one(tmp_path):
    path = tmp_path / "h.jsonl"
    Session.create(tmp_path, header("h")).close()
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    session, repairs = open_closed(path)
    assert kinds(repairs) == ["torn_tail"] and session.messages == []
    assert path.read_bytes().endswith(b"\n")


def test_clean_session_opened_read_only_can_still_append(tmp_path):
    path = copy_fixture("clean-multi-turn", tmp_path)
    with Session.open(path, repair=False)[0] as session:
        session.append(Message.user("more"))
    assert open_closed(path)[0].messages[-1].text == "more"


def test_run_marker_event_is_checked(tmp_path):
    with Session.create(tmp_path, header()) as session, pytest.raises(ValueError, match="start"):
        session.mark_run("r", "middle", "t")
