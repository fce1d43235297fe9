"""A big paste in a chat message, in a real pseudo-terminal: sent whole, echoed collapsed."""

from __future__ import annotations

from pathlib import Path

import pytest

from arreio.cli.chat.paste import collapsed
from tests.chat.test_chat_terminal import chat, leave, session_of

BLOCK = "\n".join(f"line {i} of the log" for i in range(1, 41))


@pytest.mark.slow
def test_a_big_paste_is_sent_whole_and_echoed_as_one_label(work: Path, arreio_env) -> None:
    """A 40-line paste stayed on the screen as 40 lines after it was sent, between the prompt and the
    answer (and again for every message that carried one)."""
    term = chat(work, arreio_env, '- text: "Got it."\n- text: "Short one."\n')
    term.prompt()
    term.type("look at this: \x1b[200~" + BLOCK + "\x1b[201~")  # as a terminal sends a paste
    term.next("line 40 of the log")  # shown whole while the message is edited
    term.type(" thanks\r")
    term.next(r"› look at this: \[pasted 40 lines\] thanks\n")
    term.next("Got it.")
    raw = term.output[term.output.rindex("line 40 of the log") :]
    assert "\x1b[J" in raw.split("[pasted 40 lines]")[0]  # prompt_toolkit's own echo was erased first
    term.prompt()
    term.type("and \x1b[200~two\nlines\x1b[201~\r")  # a small paste stays as it is
    term.next("Short one.")
    sid = leave(term)
    assert "[pasted 2 lines]" not in term.plain
    sent = [m.text for m in session_of(work, sid).messages if m.role == "user"]
    assert sent == [f"look at this: {BLOCK} thanks", "and two\nlines"]  # the model got every line
    assert "line 40 of the log" in (work / ".arreio" / "chat_history").read_text()  # Up brings it back whole


def test_collapsed_labels_each_big_paste_found_as_pasted() -> None:
    long_line = "x" * 1500
    assert collapsed(f"a {BLOCK} b {long_line}", [BLOCK, long_line]) == "a [pasted 40 lines] b [pasted 1,500 chars]"
    assert collapsed("a\nb\nc", ["a\nb\nc"]) is None  # small: shown as it is
    edited = BLOCK.replace("line 7 of", "line seven of")
    assert collapsed(edited, [BLOCK]) is None  # changed since it was pasted: shown as it is
    assert collapsed(f"{BLOCK}\n{BLOCK}", [BLOCK, BLOCK]) == "[pasted 40 lines]\n[pasted 40 lines]"
