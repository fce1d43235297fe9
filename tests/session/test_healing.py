"""Pairing repair (`heal`) and its oracle (`check_pairing`): pure functions over message lists."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from arreio.engine.core.messages import Message, TextPart, ToolCallPart, ToolResultPart
from arreio.engine.session.healing import check_pairing, heal

MODEL = "anthropic/claude-sonnet-4-5"


def ask(*call_ids: str, text: str = "") -> Message:
    parts: list = [TextPart(text=text)] if text else []
    parts += [ToolCallPart(id=c, name="shell", arguments={"command": f"echo {c}"}) for c in call_ids]
    return Message.assistant(parts, model=MODEL)


def result(call_id: str, content: str = "ok") -> Message:
    return Message.tool_result(ToolResultPart(call_id=call_id, name="shell", content=content))


def ids(messages: list[Message]) -> list[str]:
    """A compact picture of a history: U/A for user/assistant text, call ids for results."""
    picture = []
    for m in messages:
        if m.role == "tool":
            part = m.tool_result_part
            picture.append(f"{part.call_id}:{part.status}" if part else "tool:?")
        elif m.role == "assistant" and m.tool_calls:
            picture.append("A(" + ",".join(c.id for c in m.tool_calls) + ")")
        else:
            picture.append(m.role[0].upper())
    return picture


def kinds(repairs) -> list[str]:
    return [r.kind for r in repairs]


def test_whole_history_is_left_alone():
    history = [Message.user("go"), ask("c1", "c2"), result("c1"), result("c2"), ask(text="done")]
    healed, repairs = heal(history)
    assert repairs == []
    assert healed == history
    assert all(a is b for a, b in zip(healed, history, strict=True))  # same objects, not copies


def test_call_without_result_gets_an_interrupted_result():
    healed, repairs = heal([Message.user("go"), ask("c1", "c2"), result("c1")])
    assert ids(healed) == ["U", "A(c1,c2)", "c1:ok", "c2:interrupted"]
    assert kinds(repairs) == ["interrupted_result"]
    synthetic = healed[-1].tool_result_part
    assert synthetic.is_error and synthetic.name == "shell"
    assert "c2" in repairs[0].detail


def test_orphan_result_is_dropped():
    healed, repairs = heal([Message.user("go"), result("ghost"), ask("c1"), result("c1"), result("nobody")])
    assert ids(healed) == ["U", "A(c1)", "c1:ok"]
    assert kinds(repairs) == ["orphan_result_dropped", "orphan_result_dropped"]


def test_result_before_its_call_is_an_orphan():
    healed, repairs = heal([result("c1"), ask("c1")])
    assert ids(healed) == ["A(c1)", "c1:interrupted"]
    assert sorted(kinds(repairs)) == ["interrupted_result", "orphan_result_dropped"]


def test_results_are_reordered_to_the_calls_order():
    healed, repairs = heal([ask("c1", "c2", "c3"), result("c3"), result("c1"), result("c2")])
    assert ids(healed) == ["A(c1,c2,c3)", "c1:ok", "c2:ok", "c3:ok"]
    assert set(kinds(repairs)) == {"reordered"}


def test_a_result_that_drifted_past_a_user_message_comes_back_to_its_call():
    healed, repairs = heal([ask("c1"), Message.user("hurry"), result("c1"), ask(text="ok")])
    assert ids(healed) == ["A(c1)", "c1:ok", "U", "A"]
    assert kinds(repairs) == ["reordered"]


def test_duplicate_result_is_dropped_and_the_first_one_kept():
    healed, repairs = heal([ask("c1"), result("c1", "first"), result("c1", "second")])
    assert ids(healed) == ["A(c1)", "c1:ok"]
    assert healed[1].tool_result_part.content == "first"
    assert kinds(repairs) == ["duplicate_result_dropped"]


def test_tool_message_without_a_result_part_is_dropped():
    empty_tool = Message(role="tool", parts=[TextPart(text="no result here")])
    healed, repairs = heal([ask("c1"), result("c1"), empty_tool])
    assert ids(healed) == ["A(c1)", "c1:ok"]
    assert kinds(repairs) == ["orphan_result_dropped"]


def test_a_tool_message_with_two_results_is_split():
    both = Message(role="tool", parts=[result("c1").parts[0], result("c2").parts[0]])
    healed, repairs = heal([ask("c1", "c2"), both])
    assert ids(healed) == ["A(c1,c2)", "c1:ok", "c2:ok"]
    assert check_pairing(healed) == []
    assert repairs  # the split is reported


def test_reused_call_ids_pair_with_the_nearest_open_call():
    history = [ask("x"), Message.user("again"), ask("x"), result("x", "late")]
    healed, repairs = heal(history)
    assert ids(healed) == ["A(x)", "x:interrupted", "U", "A(x)", "x:ok"]
    assert healed[-1].tool_result_part.content == "late"
    assert heal(healed) == (healed, [])


def test_repeated_id_within_one_message_pairs_in_order():
    history = [ask("x", "x"), result("x", "one"), result("x", "two")]
    healed, repairs = heal(history)
    assert repairs == [] and healed == history


def test_healing_twice_changes_nothing():
    messy = [
        Message.user("go"),
        ask("c1", "c2"),
        result("c2"),
        Message.user("interrupting"),
        result("c1"),
        result("c1"),
        result("ghost"),
        ask("c3"),
    ]
    once, repairs = heal(messy)
    assert repairs
    twice, again = heal(once)
    assert again == []
    assert twice == once


def test_check_pairing_names_each_violation():
    assert check_pairing([ask("c1")]) == ["message 1: call c1 is not followed by its result"]
    assert check_pairing([result("c1")]) == ["message 0: tool result does not follow a call"]
    out_of_order = check_pairing([ask("c1", "c2"), result("c2"), result("c1")])
    assert len(out_of_order) == 2 and "expected" in out_of_order[0]
    assert check_pairing([ask("c1"), Message.user("x"), result("c1")]) != []


# -- property: any jumble of messages heals into a whole, stable history ------------------------------
CALL_IDS = ["a", "b", "c", "d"]
message_strategy = st.one_of(
    st.just(Message.user("hi")),
    st.just(ask(text="answer")),
    st.lists(st.sampled_from(CALL_IDS), min_size=1, max_size=3).map(lambda cs: ask(*cs)),
    st.sampled_from(CALL_IDS).map(result),
    st.just(Message(role="tool", parts=[TextPart(text="junk")])),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(message_strategy, max_size=25))
def test_heal_always_yields_pairing_and_is_idempotent(history):
    healed, _ = heal(history)
    assert check_pairing(healed) == []
    assert heal(healed) == (healed, [])
    # nothing but tool results is ever added or removed
    assert [m for m in healed if m.role != "tool"] == [m for m in history if m.role != "tool"]
