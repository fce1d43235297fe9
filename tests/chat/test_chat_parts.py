"""The chat's parts, in-process: piped input split into messages, @path mentions, Markdown rendered
block by block, the stats line, inline approvals, and the prompt's keys driven through
prompt_toolkit's own pipe input (the real key bindings, no terminal needed)."""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.console import Console

from arreio.cli.chat.approval import QUESTION, ChatApprovals
from arreio.cli.chat.mentions import expand
from arreio.cli.chat.piped import split_messages
from arreio.cli.chat.view import ChatRenderer, _cut, stats_line
from arreio.engine.core import events as ev


# -- piped input ---------------------------------------------------------------------------------
def test_each_line_is_a_message_without_blank_lines() -> None:
    assert split_messages("List the notes\nCount them\r\n/cost\n") == ["List the notes", "Count them", "/cost"]


def test_blocks_between_blank_lines_are_messages_when_there_is_one() -> None:
    text = "\n\nFirst line\nof the first\n\n  \nSecond\n\n/cost\n\n"
    assert split_messages(text) == ["First line\nof the first", "Second", "/cost"]


def test_nothing_but_blank_lines_is_no_message() -> None:
    assert split_messages("\n \n\t\n") == []


# -- mentions ------------------------------------------------------------------------------------
def test_a_mention_attaches_the_files_text_once(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("print('hi')\n")
    out = expand("Explain @src/app.py, and again @src/app.py please", tmp_path)
    assert out.attached == ["src/app.py"] and out.notes == []
    assert out.text.startswith("Explain @src/app.py, and again @src/app.py please\n\n[arreio: attached by the user")
    assert "~~~ src/app.py (12 bytes)\nprint('hi')\n~~~\n" in out.text
    assert out.text.count("print('hi')") == 1


def test_an_email_or_a_name_is_no_mention_and_a_missing_path_is_said(tmp_path: Path) -> None:
    out = expand("Mail me@example.com or ask @alice about @docs/missing.md", tmp_path)
    assert out.text == "Mail me@example.com or ask @alice about @docs/missing.md"
    assert out.notes == ["@docs/missing.md: no such file here, sent as written"]


def test_a_big_file_is_cut_and_the_cut_is_said_to_both(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"line {i}\n" for i in range(5000)))
    out = expand("Summarise @big.txt", tmp_path, cap=1000)
    assert "line 0\n" in out.text and "line 4999" not in out.text
    assert "[arreio: big.txt is 48,890 bytes; only its first 997 bytes is above" in out.text  # the model is told
    assert out.notes and out.notes[0].startswith("@big.txt: cut to its first")  # and so is the person


def test_a_binary_file_is_not_attached_and_a_fence_in_the_file_cannot_close_ours(tmp_path: Path) -> None:
    (tmp_path / "x.bin").write_bytes(b"\x00\x01\x02")
    (tmp_path / "doc.md").write_text("~~~~\ninside\n~~~~\n")
    out = expand("Look at @x.bin and @doc.md", tmp_path)
    assert out.attached == ["doc.md"] and out.notes == ["@x.bin: a binary file; not attached"]
    assert "~~~~~ doc.md" in out.text  # a longer fence than any line of the file


# -- rendering -----------------------------------------------------------------------------------
def test_blocks_end_at_blank_lines_outside_code_fences() -> None:
    assert _cut("one\n\ntwo") == len("one\n\n")
    assert _cut("```\ncode\n\nmore\n") == 0  # inside an open fence: nothing is complete
    assert _cut("```\ncode\n\n```\n\nafter") == len("```\ncode\n\n```\n\n")


def _done(**fields) -> ev.Done:
    base = {
        "verdict": "success",
        "exit_code": 0,
        "steps": 3,
        "tool_calls": 2,
        "input_tokens": 1200,
        "output_tokens": 34,
        "cost_usd": 0.0123,
        "cache_share": 0.62,
    }
    return ev.Done(**{**base, **fields})


def test_the_stats_line_says_steps_calls_tokens_cost_and_cache_share() -> None:
    assert stats_line(_done()) == "3 steps · 2 tool calls · 1,234 tokens · $0.012 · 62% cached"
    assert (
        stats_line(_done(steps=1, tool_calls=1, free=True, cache_share=0.0))
        == "1 step · 1 tool call · 1,234 tokens · $0 (offline) · 0% cached"
    )


def test_the_answer_is_rendered_as_markdown_block_by_block() -> None:
    out = io.StringIO()
    view = ChatRenderer(Console(file=out, width=60, force_terminal=False), markdown=True)
    for chunk in ("There are **two", "** files:\n\n- a.md\n"):
        view(ev.TextDelta(text=chunk))
    assert "There are two files:" in out.getvalue()  # the first block was drawn once it was complete
    assert "a.md" not in out.getvalue()  # the list was not complete yet
    view(ev.TextDelta(text="- b.md\n\nDone \x1b[2J."))
    assert "• b.md" in out.getvalue() and "Done" not in out.getvalue()
    view(_done(changes={"created": ["a.md"], "modified": [], "deleted": []}))
    shown = out.getvalue()
    assert "**" not in shown and "• a.md" in shown and "• b.md" in shown
    assert "\\x1b[2J" in shown and "\x1b[2J" not in shown  # model text stays inert
    assert "3 steps · 2 tool calls · 1,234 tokens · $0.012 · 62% cached" in shown
    assert "changed 1 file (1 created) · /diff shows them · /undo takes them back" in shown


def test_text_that_looks_like_markup_is_shown_not_dropped() -> None:
    out = io.StringIO()
    view = ChatRenderer(Console(file=out, width=100, force_terminal=False), markdown=True)
    markup = '<tools>\n  <function name="list_dir" arguments=\'{"path": "."}\'/>\n</tools>'
    view(ev.TextDelta(text=markup + "\n\nAnd `<b>` in code, <p>html</p> 1 < 2.\n\n```html\n<div>x</div>\n```\n"))
    view(_done())
    shown = out.getvalue()
    assert "<tools>" in shown and '<function name="list_dir"' in shown and "</tools>" in shown
    assert "<p>html</p> 1 < 2." in shown and "<b>" in shown and "<div>x</div>" in shown
    assert "\\<" not in shown  # the escaping is the renderer's, never shown


def test_at_a_terminal_the_block_being_written_shows_in_a_preview_that_ends_with_the_turn() -> None:
    out = io.StringIO()
    view = ChatRenderer(Console(file=out, width=60, force_terminal=True, color_system=None), markdown=True)
    view(ev.TextDelta(text="Streaming as it comes"))
    assert "Streaming as it comes" in out.getvalue() and "\x1b[?25l" in out.getvalue()  # shown before it is done
    assert view.writing is False  # the preview shows it: no spinner over it
    view(ev.ToolStart(call_id="c", name="list_dir", arguments={"path": "."}))
    shown = out.getvalue()
    assert shown.rfind("\x1b[?25h") > shown.rfind("\x1b[?25l")  # the preview ended: the cursor is back
    assert shown.rstrip().endswith("list_dir(path='.')")  # the block was printed for good, then the call
    assert shown.count("Streaming as it comes") >= 2  # the preview, then the final rendering


# -- approvals -----------------------------------------------------------------------------------
def _event(command: str = "echo hi") -> ev.ApprovalRequired:
    return ev.ApprovalRequired(session_id="s", call_id="c1", name="shell", arguments={"command": command})


def test_explain_shows_the_arguments_then_always_allows_the_same_call_for_the_chat() -> None:
    err = io.StringIO()
    ask = ChatApprovals(stdin=io.StringIO("e\na\n"), stderr=err)
    assert ask(_event()) is True
    assert err.getvalue().count(QUESTION) == 2 and '"command": "echo hi"' in err.getvalue()
    assert ask.allowed(_event()) and ask(_event()) is True  # not asked again: the input is used up
    assert not ask.allowed(_event("rm -rf build"))  # other arguments are asked about afresh


@pytest.mark.parametrize(("typed", "approved"), [("y\n", True), ("n\n", False), ("\n", False), ("", False)])
def test_yes_no_enter_and_end_of_input(typed: str, approved: bool) -> None:
    assert ChatApprovals(stdin=io.StringIO(typed), stderr=io.StringIO())(_event()) is approved


# -- the prompt's keys ---------------------------------------------------------------------------
def _typed(*messages: str, tmp_path: Path) -> list[str]:
    """What the chat's real prompt session (its bindings, its history file) returns for each run of keys."""
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from arreio.cli.chat import slash
    from arreio.cli.chat.input import prompt_session

    got = []
    with create_pipe_input() as pipe:
        session = prompt_session(tmp_path / "state", slash.names(), tmp_path, input=pipe, output=DummyOutput())
        for keys in messages:
            pipe.send_text(keys)
            got.append(session.prompt())
    return got


def test_a_trailing_backslash_and_esc_enter_start_new_lines(tmp_path: Path) -> None:
    assert _typed("one \\\rtwo\x1b\rthree\r", tmp_path=tmp_path) == ["one \ntwo\nthree"]
    assert (tmp_path / "state" / "chat_history").read_text().count("three") == 1  # kept for next time


def test_ctrl_c_with_text_typed_clears_it_and_on_an_empty_prompt_interrupts(tmp_path: Path) -> None:
    assert _typed("draft\x03sent\r", tmp_path=tmp_path) == ["sent"]
    with pytest.raises(KeyboardInterrupt):
        _typed("\x03", tmp_path=tmp_path)


def test_the_saved_history_holds_no_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-ant-api03-" + "x7Qm2" * 12
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    assert _typed(f"use the key {key} please\r", tmp_path=tmp_path) == [f"use the key {key} please"]
    saved = (tmp_path / "state" / "chat_history").read_text()
    assert "use the key" in saved and key not in saved


def test_ctrl_r_finds_an_earlier_message_and_a_paste_is_taken_whole(tmp_path: Path) -> None:
    got = _typed("first message\r", "other\r", "\x12fir\r\r", "\x1b[200~line1\nline2\r\x1b[201~\r", tmp_path=tmp_path)
    assert got == ["first message", "other", "first message", "line1\nline2\n"]
    again = _typed("\x12oth\r\r", tmp_path=tmp_path)  # a new chat searches the saved history
    assert again == ["other"]


def test_tab_completes_slash_commands_and_paths(tmp_path: Path) -> None:
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from arreio.cli.chat.input import ChatCompleter

    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("a")
    (tmp_path / ".hidden").write_text("h")
    done = ChatCompleter(["compact", "cost", "clear"], tmp_path)

    def texts(typed: str) -> list[str]:
        return [c.text for c in done.get_completions(Document(typed), CompleteEvent(completion_requested=True))]

    assert texts("/co") == ["/compact", "/cost"]
    assert texts("look at @no") == ["@notes/"]
    assert texts("look at @notes/") == ["@notes/a.md"]
    assert texts("@") == ["@notes/"]  # hidden files only when asked for with a dot
    assert texts("plain words") == []


def test_unknown_slash_commands_get_did_you_mean() -> None:
    from arreio.cli.chat import slash

    said: list[str] = []
    chat = SimpleNamespace(say=said.append)
    slash.dispatch(chat, "/comapct")
    slash.dispatch(chat, "/zzz")
    assert "unknown command /comapct; did you mean /compact?" in said[0]
    assert "did you mean" not in said[1] and "/help lists them" in said[1]


def test_a_huge_file_is_read_only_as_far_as_it_is_attached(tmp_path: Path) -> None:
    """A mentioned multi-GB log is not read whole into memory: only the cap is read, the real size said."""
    with (tmp_path / "huge.log").open("wb") as handle:
        handle.write(b"start of the log\n" * 100)
        handle.truncate(3 * 1024**3)  # 3 GiB, sparse: reading it whole would take the machine's memory
    out = expand("What went wrong in @huge.log?", tmp_path, cap=1000)
    assert "start of the log" in out.text and out.attached == ["huge.log"]
    assert "huge.log is 3,221,225,472 bytes" in out.text


def test_a_mention_the_system_cannot_resolve_is_sent_as_written(tmp_path: Path) -> None:
    """`@~nobody/x` (no such user) and a name too long for the file system ended the chat before."""
    out = expand(f"Look at @~nosuchuser-arreio/x.py and @{'a' * 300}.py", tmp_path)
    assert out.attached == [] and out.text.startswith("Look at @~nosuchuser-arreio/x.py")
    assert len(out.notes) == 2 and all("no such file here" in n for n in out.notes)
