"""Tool use with a real small model (Qwen2.5-Coder 0.5B on llama-server, greedy sampling).

What is asserted is what the harness guarantees, never the model's skill alone: a run that ends in
success did what the goal asks (the file is there with the right content, and the promise gate
checked the answer's claim); otherwise it failed with a reason said — never success with nothing done.
"""

from __future__ import annotations

import pytest

from tests.realmodel.conftest import Project, env_for
from tests.realmodel.noparse import NoParseProxy

pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(2400)]


def test_three_step_tool_task_ends_with_the_file_and_a_checked_promise(project: Project) -> None:
    (project.root / "notes.txt").write_text("apple\nbanana\ncherry\n")
    (project.root / "README.md").write_text("# fruit\n")
    result = project.run(
        "First list the files in this folder. Then read notes.txt. Then write its first line, "
        "in capital letters, to a new file answer.txt.",
        "--max-steps",
        "6",
        "--tools",
        "list_dir,read_file,write_file",
    )
    done, answer = result.done, project.root / "answer.txt"
    used = [e["name"] for e in result.of("tool_start")]
    if done["verdict"] == "success":
        assert answer.is_file() and answer.read_text().strip() == "APPLE", result.story()
        assert {"list_dir", "read_file", "write_file"} <= set(used), result.story()
        promise = [g for g in result.of("gate_result") if g["gate"] == "promise"]
        assert promise and all(g["passed"] for g in promise), result.story()
        assert "answer.txt" in done["changes"]["created"]
    else:
        assert result.code != 0 and done["message"], result.story()


def test_a_tool_call_written_as_text_is_parsed_and_run(project: Project) -> None:
    """A server that does not parse the model's tool calls hands `<tool_call>{…}</tool_call>` over as
    content: arreio recognises it, says so, and runs it."""
    (project.root / "notes.txt").write_text("the secret word is heron\n")
    with NoParseProxy(project.server.url) as proxy:
        project.env = env_for(project.home, type(project.server)(proxy.url, project.server.model))
        # the model's first move on this goal, at temperature 0, is a list_dir call written as JSON
        result = project.run(
            "First list the files in this folder.", "--max-steps", "3", "--tools", "list_dir,read_file"
        )
    assert proxy.requests and all(r["parse_tool_calls"] is False for r in proxy.requests)
    assert "text_tool_call" in result.warnings(), result.story()
    listed = [e for e in result.of("tool_start") if e["name"] == "list_dir"]
    assert listed and listed[0]["call_id"].startswith("text_"), result.story()
    ended = [e for e in result.of("tool_end") if e["call_id"] == listed[0]["call_id"]]
    assert ended and not ended[0]["is_error"] and ended[0]["chars"] > 0, result.story()
    done = result.done  # whatever the model says next, a reply that is only call text is never the answer
    assert done["verdict"] != "success" or not done["final_text"].lstrip().startswith(("{", "```")), result.story()


def test_a_reply_cut_at_the_token_cap_is_not_accepted(project: Project) -> None:
    """`finish_reason: length` twice: the cut text is never the answer; the run fails and says why.

    The cap is smaller than any reply the model could give to this goal — its count, a refusal, a
    question back — so the test never depends on which of them the model picks."""
    project.config(max_tokens=5)
    result = project.run(
        "Count from 1 to 300 in digits, one number per line. Do not use any tool.",
        "--max-steps",
        "4",
        "--tools",
        "read_file",
    )
    done = result.done
    assert "reply_cut" in result.warnings(), result.story()
    assert done["verdict"] != "success" and result.code == 1, result.story()
    assert "max_tokens" in done["message"], result.story()
