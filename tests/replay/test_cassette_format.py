"""The cassette's pure parts: redaction, the canonical request and its fingerprint, the words a diff
uses, and loading (versions, torn tails, bad lines)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from arreio.engine.core.errors import UsageError
from arreio.engine.core.messages import Message, ToolCallPart, ToolResultPart
from arreio.engine.core.model_io import ModelRequest, ToolSpec
from arreio.engine.core.prompt import assemble_system
from arreio.engine.providers.cassette import (
    canonical_request,
    diff_requests,
    fingerprint,
    load_cassette,
    request_digest,
)
from arreio.engine.providers.cassette_reading import compare_cassettes
from arreio.engine.providers.recorder import RecordingProvider
from arreio.engine.providers.replay import ReplayProvider
from arreio.engine.providers.testing import FixedClock, ScriptedProvider
from arreio.engine.walls.redact import CASSETTE, Redactor

PLAIN = Redactor(labels=CASSETTE)  # no environment secrets: token formats only


def _request(
    cwd: Path, *, when: str = "2026-06-27T16:00:00+00:00", session: str = "s1", extra: list[Message] = ()
) -> ModelRequest:
    system = assemble_system(cwd=cwd, now=FixedClock(when).now(), tool_names=["read_file"])
    messages = [
        Message.user("Summarise notes.md"),
        Message.assistant(
            [ToolCallPart(id="c1", name="read_file", arguments={"path": f"{cwd}/notes.md"})], model="offline"
        ),
        Message.tool_result(
            ToolResultPart(call_id="c1", name="read_file", content=f"error: {cwd}/notes.md is outside? no: ok")
        ),
        *extra,
    ]
    tools = [ToolSpec(name="read_file", description="Read a file.", input_schema={"type": "object"})]
    return ModelRequest(model="offline", system=system, messages=messages, tools=tools, session_id=session)


# -- redaction ------------------------------------------------------------------------------------


def test_redactor_finds_env_secrets_and_token_formats() -> None:
    env = {"GITHUB_TOKEN": "abcdefgh12345", "DB_PASSWORD": "pa55word!", "SHORT_KEY": "abc", "HOME": "/home/me-long"}
    r = Redactor.from_env(env, labels=CASSETTE)
    text = (
        "tok abcdefgh12345 pw pa55word! short abc home /home/me-long "
        "sk-ant-api03-ABCDEFGHIJKLMNOP AKIAABCDEFGHIJKLMNOP xoxb-1234-abcdefghij"
    )
    out = r.text(text)
    assert "[redacted:GITHUB_TOKEN]" in out and "[redacted:DB_PASSWORD]" in out
    assert "abc home /home/me-long" in out  # short values and non-secret names stay
    assert out.count("[redacted:token]") == 3 and "AKIA" not in out and "sk-ant" not in out
    assert r.text(out) == out  # idempotent


def test_a_secret_split_across_stream_chunks_is_still_redacted() -> None:
    r = Redactor({"API_KEY": "supersecret99"}, labels=CASSETTE)
    pieces = ["the key is supe", "rsecr", "et99, done", " and sk-", "ABCDEFGHIJKLMNOPQRST!"]
    out = r.chunks(pieces)
    assert len(out) == len(pieces)
    assert "".join(out) == r.text("".join(pieces)) == "the key is [redacted:API_KEY], done and [redacted:token]!"
    assert out[1] == "" and out[0] == "the key is [redacted:API_KEY]"


def test_redacted_events_keep_their_shape() -> None:
    r = Redactor({"X_TOKEN": "12345678"}, labels=CASSETTE)
    events = [
        {"type": "text", "text": "a 1234"},
        {"type": "text", "text": "5678 b"},
        {"type": "tool_call", "id": "c", "name": "shell", "arguments": {"command": "echo 12345678"}},
        {"type": "done", "stop_reason": "end_turn", "usage": {"input_tokens": 1}, "error": None},
    ]
    out = r.stream_events(events)
    assert [e["type"] for e in out] == ["text", "text", "tool_call", "done"]
    assert out[0]["text"] + out[1]["text"] == "a [redacted:X_TOKEN] b"
    assert out[2]["arguments"]["command"] == "echo [redacted:X_TOKEN]" and out[3] == events[3]


# -- canonical request and fingerprint ------------------------------------------------------------


def test_fingerprint_ignores_date_platform_workdir_and_session(tmp_path: Path) -> None:
    a, b = tmp_path / "a" / "work", tmp_path / "elsewhere" / "work"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    one = canonical_request(_request(a, session="s1"), PLAIN)
    two = canonical_request(_request(b, when="2031-01-02T03:04:05+00:00", session="s2"), PLAIN)
    assert fingerprint(one) == fingerprint(two)
    env = one["system"][-1]["text"]
    assert "<cwd>" in env and "<date>" in env and "<platform>" in env
    assert "<cwd>/notes.md" in json.dumps(one["messages"])
    assert "session" not in json.dumps(one["params"])


def test_workdir_is_replaced_only_as_a_whole_path(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    extra = [Message.user(f"compare {work}/x with {work}2/y and {work}.bak")]
    text = json.dumps(canonical_request(_request(work, extra=extra), PLAIN)["messages"][-1])
    assert "<cwd>/x" in text and f"{work}2/y" in text and f"{work}.bak" in text


def test_digest_diff_names_blocks_tools_params_and_messages(tmp_path: Path) -> None:
    base = _request(tmp_path)
    rec = request_digest(canonical_request(base, PLAIN))
    assert diff_requests(rec, rec) == []

    changed = base.model_copy(deep=True)
    changed.system[0].text += "\nBe brief."
    changed.tools.append(ToolSpec(name="web_fetch", description="Fetch.", input_schema={}))
    changed.max_tokens = 1024
    changed.messages[2] = Message.tool_result(ToolResultPart(call_id="c1", name="read_file", content="new"))
    changed.messages.append(Message.user("and more"))
    words = diff_requests(rec, request_digest(canonical_request(changed, PLAIN)))
    assert "the system prompt's block 'identity' differs" in words
    assert "tools offered differ: + web_fetch" in words
    assert "parameter max_tokens differs: 8192 recorded, 1024 now" in words
    assert "message 3 (tool result of read_file) differs" in words
    assert "the history holds 4 message(s), 3 were recorded" in words

    fewer = base.model_copy(deep=True)
    fewer.system = [b for b in fewer.system if b.name != "tools"]
    fewer.tools = []
    words = diff_requests(rec, request_digest(canonical_request(fewer, PLAIN)))
    assert words == ["the system prompt lost block 'tools'", "tools offered differ: - read_file"]


# -- loading --------------------------------------------------------------------------------------


def _first(cwd: Path) -> ModelRequest:
    """A first request (no assistant turn yet): the scripted provider plays its replies in order."""
    return _request(cwd).model_copy(update={"messages": [Message.user("hi")]})


def _record(path: Path, replies: list[dict], requests: list[ModelRequest]) -> None:
    provider = RecordingProvider(
        ScriptedProvider(replies), path, model="offline", redactor=Redactor(), clock=FixedClock()
    )

    async def go() -> None:
        for request in requests:
            async for _ in provider.stream(request):
                pass

    asyncio.run(go())


def test_recorder_and_replay_round_trip_and_lenient_mismatch(tmp_path: Path) -> None:
    request = _first(tmp_path)
    path = tmp_path / "c.jsonl"
    _record(path, [{"error": {"status": 500}}, {"text": "hello world", "chunk_chars": 4}], [request, request])
    header = json.loads(path.read_text().splitlines()[0])
    assert header["version"] == 1 and header["created_at"] == "2026-06-27T16:00:00.000Z"

    async def play(provider, req):
        return [e async for e in provider.stream(req)]

    strict = ReplayProvider(path, strict=True)
    first = asyncio.run(play(strict, request))
    assert first[-1].error.status == 500 and first[-1].error.kind == "retryable"
    second = asyncio.run(play(strict, request))
    assert "".join(e.text for e in second if e.type == "text") == "hello world" and len(second) == 4
    assert strict.warnings == []
    ran_out = asyncio.run(play(strict, request))
    assert ran_out[-1].error.kind == "fatal" and "ran out" in ran_out[-1].error.message

    lenient = ReplayProvider(path, strict=False)
    other = request.model_copy(update={"max_tokens": 5})
    served = asyncio.run(play(lenient, other))
    assert served[-1].error.status == 500  # served by order
    assert len(lenient.warnings) == 2  # the mismatch, and one call never replayed
    assert "parameter max_tokens differs" in lenient.warnings[0] and "not replayed" in lenient.warnings[1]


def test_cassette_loading_rejects_bad_files_and_skips_a_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    _record(path, [{"text": "a"}, {"text": "b"}], [_first(tmp_path)] * 2)
    lines = path.read_text().splitlines()

    torn = tmp_path / "torn.jsonl"
    torn.write_text("\n".join(lines[:2]) + "\n" + lines[2][:40])
    cassette = load_cassette(torn)
    assert len(cassette.calls) == 1 and "torn" in cassette.problems[0]

    middle = tmp_path / "middle.jsonl"
    middle.write_text("\n".join([lines[0], "{not json", lines[2]]) + "\n")
    with pytest.raises(UsageError, match="line 2 is not JSON"):
        load_cassette(middle)

    newer = tmp_path / "newer.jsonl"
    newer.write_text(lines[0].replace('"version":1', '"version":2') + "\n")
    with pytest.raises(UsageError, match="format version 2.*upgrade arreio"):
        load_cassette(newer)

    for bad, match in ((tmp_path / "none.jsonl", "not found"), (tmp_path, "folder")):
        with pytest.raises(UsageError, match=match):
            load_cassette(bad)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(UsageError, match="empty"):
        load_cassette(empty)
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text(lines[0] + "\n" + json.dumps({"type": "call", "n": "x"}) + "\n")
    with pytest.raises(UsageError, match="line 2"):
        load_cassette(wrong)


def test_compare_cassettes_call_by_call(tmp_path: Path) -> None:
    request = _first(tmp_path)
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    _record(a, [{"text": "x"}], [request, request])
    _record(b, [{"text": "x"}], [request, request.model_copy(update={"max_tokens": 7}), request])
    _record(c, [{"text": "q"}], [request])
    rows = compare_cassettes(load_cassette(a), load_cassette(b))
    assert [(r.n, r.status) for r in rows] == [(1, "same"), (2, "changed"), (3, "added")]
    assert rows[1].changes == ["parameter max_tokens differs: 8192 recorded, 7 now"]
    rows = compare_cassettes(load_cassette(a), load_cassette(c))
    assert [(r.n, r.status, r.changes) for r in rows] == [(1, "changed", ["the reply differs"]), (2, "removed", [])]
