from arreio.engine.core.wording import counted


def test_one_is_singular_everything_else_plural() -> None:
    assert counted(1, "step") == "1 step"
    assert counted(0, "step") == "0 steps"
    assert counted(2, "tool call") == "2 tool calls"
    assert counted(1, "entry", "entries") == "1 entry"
    assert counted(3, "entry", "entries") == "3 entries"
