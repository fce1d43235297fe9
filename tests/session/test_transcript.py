"""Exporting a session (engine/session/transcript*.py): Markdown, self-contained HTML, JSON."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

from arreio.engine.core.messages import ImagePart, Message, TextPart, ThinkingPart, ToolCallPart, ToolResultPart
from arreio.engine.core.model_io import SystemBlock
from arreio.engine.session.file import Session, SessionHeader
from arreio.engine.session.transcript import to_json, to_markdown, turns
from arreio.engine.session.transcript_html import to_html
from arreio.engine.walls.redact import Redactor

PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201a2dd2a4a0000000049454e44ae426082"
    )
).decode()
SECRET = "sk-ant-api03-" + "A1b2C3d4" * 8


def session(tmp_path: Path) -> Session:
    header = SessionHeader(
        id="20261201-100000-abcdef",
        created_at="2026-12-01T10:00:00.000Z",
        cwd=str(tmp_path),
        model="offline",
        title="Fix <the> bug & ship",
        system=[SystemBlock(name="identity", text="You are arreio.")],
    )
    s = Session.create(tmp_path / "sessions", header, redactor=Redactor.from_env({}))
    s.redactor = Redactor.from_env({})
    s.append(Message.user(f"please fix it; my key is {SECRET}"))
    s.append(
        Message.assistant(
            [
                ThinkingPart(thinking="the bug is in parse()", signature="sig"),
                TextPart(text="Looking."),
                ToolCallPart(id="c1", name="shell", arguments={"command": "echo '<script>alert(1)</script>'"}),
                ToolCallPart(id="c2", name="read_file", arguments={"path": "a.py"}),
            ],
            model="offline",
        )
    )
    s.append(Message.tool_result(ToolResultPart(call_id="c1", name="shell", content="<script>alert(1)</script>\n```")))
    s.append(
        Message.tool_result(
            ToolResultPart(
                call_id="c2",
                name="read_file",
                content="\n".join(map(str, range(60))),
                images=[ImagePart(media_type="image/png", data=PNG)],
            )
        )
    )
    s.append(Message.assistant([TextPart(text="Fixed: see https://example.com/x.png")], model="offline"))
    s.close()
    return Session.open(s.path, repair=False)[0]


def test_results_sit_under_their_calls_and_tool_messages_fold_into_the_turn(tmp_path: Path) -> None:
    s = session(tmp_path)
    shaped = turns(s.messages)
    assert [t.role for t in shaped] == ["user", "assistant", "assistant"]
    calls = [e for e in shaped[1].entries if e.kind == "call"]
    assert [(c.call.id, c.result.call_id) for c in calls] == [("c1", "c1"), ("c2", "c2")]


def test_an_orphan_result_is_shown_where_it_stands() -> None:
    messages = [Message.user("hi"), Message.tool_result(ToolResultPart(call_id="gone", name="shell", content="out"))]
    shaped = turns(messages)
    assert shaped[1].role == "tool" and shaped[1].entries[0].kind == "result"


def test_markdown_folds_thinking_and_long_results_and_fences_hold(tmp_path: Path) -> None:
    md = to_markdown(*_parts(session(tmp_path)))
    assert md.startswith("# Fix <the> bug & ship\n")
    assert "<details><summary>Thinking</summary>" in md and "the bug is in parse()" in md
    assert "<details><summary>Result: ok · 60 lines</summary>" in md  # long: folded
    assert "*Result: ok · 2 lines*" in md  # short: shown
    assert "````\n<script>alert(1)</script>\n```\n````" in md  # the fence is longer than the backticks inside
    assert md.index("**Tool call** `shell`") < md.index("<script>alert(1)</script>\n```") < md.index("`read_file`")


def test_secrets_are_shown_as_stored_never_recovered(tmp_path: Path) -> None:
    s = session(tmp_path)
    stored = s.path.read_text()
    assert SECRET not in stored  # the session's writer redacted it
    for text in (to_markdown(*_parts(s)), to_html(*_parts(s)), to_json(s.header, s.messages, s.runs, [])):
        assert SECRET not in text and "please fix it; my key is" in text


def test_html_is_escaped_self_contained_and_fetches_nothing(tmp_path: Path) -> None:
    page = to_html(*_parts(session(tmp_path)))
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<title>Fix &lt;the&gt; bug &amp; ship</title>" in page
    assert "default-src 'none'" in page  # the CSP: no load that is not inline
    # nothing the browser would load: every src is a data: URI, no <link>, no <script>, no url()
    assert re.findall(r'src="([^"]{0,5})', page) == ["data:"]
    assert "<link" not in page and "url(" not in page and "@import" not in page
    assert "https://example.com/x.png" in page  # shown as text, not loaded
    assert '<details class="thinking">' in page


def test_json_export_is_versioned_and_round_trips(tmp_path: Path) -> None:
    s = session(tmp_path)
    data = json.loads(to_json(s.header, s.messages, s.runs, []))
    assert data["export"] == "arreio.session" and data["version"] == 1
    assert [Message.model_validate(m) for m in data["messages"]] == s.messages


def _parts(s: Session):
    return s.header, s.messages, s.runs
