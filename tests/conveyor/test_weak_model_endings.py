"""A weak model's replies that are not answers never end a run as `success`: tool calls written as
text are run as calls (and said), a reply that is only an unrunnable call-shaped block or is empty
gets one correction then fails, a reply cut at the token cap is continued once then fails. The real
CLI with scripted replies; the parser against formats small models write and answers that only look
like calls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arreio.engine.loop.text_calls import read_text_calls
from tests.conftest import run_cli

TOOLS = {"list_dir", "read_file", "write_file"}


def _valid(name: str, arguments: dict) -> str | None:
    needs = {"list_dir": set(), "read_file": {"path"}, "write_file": {"path", "content"}}[name]
    return None if needs <= set(arguments) else f"missing {sorted(needs - set(arguments))}"


CALLS = {
    "fenced-json": '```json\n{"name": "list_dir", "arguments": {"path": "."}}\n```',
    "fenced-with-lead-in": (
        'I will look at the folder first.\n```json\n{"name": "list_dir", "arguments": {"path": "."}}\n```'
    ),
    "bare-json": '{"name": "read_file", "arguments": {"path": "notes.md"}}',
    "arguments-as-string": '{"name": "read_file", "arguments": "{\\"path\\": \\"notes.md\\"}"}',
    "parameters-key": '{"name": "read_file", "parameters": {"path": "notes.md"}}',
    "openai-function": (
        '{"type": "function", "function": {"name": "read_file", "arguments": "{\\"path\\": \\"a.md\\"}"}}'
    ),
    "hermes-tool-call": '<tool_call>\n{"name": "list_dir", "arguments": {"path": "."}}\n</tool_call>',
    "two-hermes-calls": (
        '<tool_call>{"name": "read_file", "arguments": {"path": "a.md"}}</tool_call>\n'
        '<tool_call>{"name": "read_file", "arguments": {"path": "b.md"}}</tool_call>'
    ),
    "xml-attributes": '<tools>\n  <function name="list_dir" arguments=\'{"path": "."}\'/>\n</tools>',
    "llama-function-eq": '<function=read_file>{"path": "notes.md"}</function>',
    "invoke-parameters": '<invoke name="read_file"><parameter name="path">notes.md</parameter></invoke>',
    "json-list": '[{"name": "read_file", "arguments": {"path": "a.md"}}, {"name": "list_dir", "arguments": {}}]',
    "tool-input": '{"tool": "read_file", "tool_input": {"path": "x.txt"}}',
}
NOT_CALLS = {
    "data-answer": '```json\n{"name": "Alice", "age": 30}\n```',
    "prose-mentions-a-tool": "I used read_file on notes.md; it has 3 lines.",
    "long-answer-with-an-example": (
        "Here is how the agent calls a tool. " * 12 + '```json\n{"name": "read_file", "arguments": {"path": "x"}}\n```'
    ),
    "html-snippet-answer": "The page has a <section> with a <function> keyword in its code sample, nothing more.",
    "plain-json-config": '{"compilerOptions": {"strict": true}}',
    "list-of-records": '[{"id": 1, "title": "a"}, {"id": 2, "title": "b"}]',
}
SHAPED = {
    "unknown-tool": '{"name": "search_web", "arguments": {"query": "x"}}',
    "arguments-missing": '<tool_call>{"name": "write_file", "arguments": {"path": "a.md"}}</tool_call>',
    "tool-list-echoed": json.dumps(
        [
            {
                "type": "function",
                "function": {
                    "name": "list_dir",
                    "description": "List a folder.",
                    "parameters": {"type": "object", "properties": {}},
                },
            }
        ]
    ),
}


@pytest.mark.parametrize("text", CALLS.values(), ids=CALLS.keys())
def test_a_call_written_as_text_is_read(text: str) -> None:
    found = read_text_calls(text, TOOLS, _valid)
    assert found.calls and not found.problems


# Qwen2.5-Coder 0.5B on llama-server, verbatim but for the path: each turn it wrote the call of the
# turn before and then again, fenced and bare — one call shown two or three times, not three calls.
_CALL = '{"name": "list_dir", "arguments": {"path": "."}}'
_FENCED = '```json\n{\n  "name": "list_dir",\n  "arguments": {\n    "path": "."\n  }\n}\n```'
ECHOED = {
    "fenced-then-bare": f"{_FENCED}\n{_CALL}\n```",
    "fenced-then-bare-twice": f"{_FENCED}\n{_CALL}\n```\n{_CALL}\n```",
    "two-hermes-copies": f"<tool_call>{_CALL}</tool_call>\n<tool_call>{_CALL}</tool_call>",
}


@pytest.mark.parametrize("text", ECHOED.values(), ids=ECHOED.keys())
def test_the_same_call_written_again_in_one_reply_runs_once(text: str) -> None:
    found = read_text_calls(text, TOOLS, _valid)
    assert found.calls == [("list_dir", {"path": "."})]


def test_bare_calls_between_unpaired_fences_are_calls_not_an_answer() -> None:
    """The fourth turn of the same run, verbatim: a fenced call, then the call three times between
    unpaired fences, with the long path of a real folder. The bare copies were left over as "prose"
    longer than a lead-in, so the reply read as an answer: the run ended in success with nothing done."""
    path = "/tmp/pytest-of-root/pytest-585/test_three_step_tool_task_ends0/project"
    bare = json.dumps({"name": "list_dir", "arguments": {"path": path}})
    fenced = "```json\n" + json.dumps({"name": "list_dir", "arguments": {"path": path}}, indent=2) + "\n```"
    text = fenced + "".join(f"\n{bare}\n```" for _ in range(3))
    found = read_text_calls(text, TOOLS, _valid)
    assert found.calls == [("list_dir", {"path": path})]
    assert found.shaped


@pytest.mark.parametrize("text", NOT_CALLS.values(), ids=NOT_CALLS.keys())
def test_an_answer_that_only_looks_like_a_call_is_an_answer(text: str) -> None:
    found = read_text_calls(text, TOOLS, _valid)
    assert found.calls == [] and not found.shaped


@pytest.mark.parametrize("text", SHAPED.values(), ids=SHAPED.keys())
def test_call_shaped_text_that_cannot_run_is_never_an_answer(text: str) -> None:
    found = read_text_calls(text, TOOLS, _valid)
    assert found.calls == [] and found.shaped and found.problems


# -- through the CLI ------------------------------------------------------------------------------
def _run(tmp_path: Path, env: dict, replies: list[dict]) -> tuple[int, list[dict], str]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "notes.md").write_text("one\ntwo\n")
    (work / "s.json").write_text(json.dumps(replies))
    done = run_cli(work, env, "run", "Look at notes.md", "--script", "s.json", "--json", "--yes")
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")], done.stderr


@pytest.mark.parametrize("name", ["fenced-json", "hermes-tool-call", "xml-attributes", "llama-function-eq"])
def test_a_text_call_runs_and_the_run_says_so(tmp_path: Path, arreio_env: dict, name: str) -> None:
    code, events, stderr = _run(tmp_path, arreio_env, [{"text": CALLS[name]}, {"text": "The folder holds notes.md."}])
    assert code == 0, stderr
    ends = [e for e in events if e["type"] == "tool_end"]
    assert len(ends) >= 1 and not ends[0]["is_error"]
    assert any(e["type"] == "warning" and e["code"] == "text_tool_call" for e in events)
    assert events[-1]["verdict"] == "success" and events[-1]["tool_calls"] == len(ends)
    assert events[-1]["final_text"] == "The folder holds notes.md."


def test_an_unrunnable_call_is_corrected_once_then_fails(tmp_path: Path, arreio_env: dict) -> None:
    code, events, stderr = _run(
        tmp_path, arreio_env, [{"text": SHAPED["unknown-tool"]}, {"text": SHAPED["unknown-tool"]}]
    )
    assert code == 1 and events[-1]["verdict"] == "failed"
    assert "tool call written as text that could not be run" in events[-1]["message"]
    assert "no tool named 'search_web'" in events[-1]["message"]
    fixed = tmp_path / "again"
    fixed.mkdir()
    code, events, _ = _run(fixed, arreio_env, [{"text": SHAPED["tool-list-echoed"]}, {"text": "notes.md has 2 lines."}])
    assert code == 0 and events[-1]["final_text"] == "notes.md has 2 lines."


def test_an_empty_reply_is_not_a_success(tmp_path: Path, arreio_env: dict) -> None:
    code, events, stderr = _run(tmp_path, arreio_env, [{"text": ""}, {"text": ""}])
    assert code == 1 and events[-1]["verdict"] == "failed" and "empty answer" in events[-1]["message"]
    assert "arreio: error:" in stderr


def test_a_reply_cut_at_the_token_cap_is_continued_then_refused(tmp_path: Path, arreio_env: dict) -> None:
    cut = {"text": "- [ ] first item\n- [ ] sec", "stop_reason": "max_tokens"}
    code, events, _ = _run(tmp_path, arreio_env, [cut, {"text": "ond item\n"}])
    assert code == 0 and events[-1]["final_text"] == "- [ ] first item\n- [ ] second item\n"
    assert any(e["type"] == "warning" and e["code"] == "reply_cut" for e in events)
    again = tmp_path / "twice"
    again.mkdir()
    code, events, _ = _run(again, arreio_env, [cut, cut])
    assert code == 1 and "cut off at the token limit" in events[-1]["message"]


def test_deep_json_after_an_unpaired_fence_is_not_a_crash() -> None:
    """Values one after another are measured by Python's own parser, which recurses once per level."""
    deep = "[" * 50_000 + "]" * 50_000
    found = read_text_calls(f"```\n{deep}\n{deep}", TOOLS, _valid)
    assert not found.calls
