"""The scripted model's reported input tokens follow what the request holds: a result
pruned to its stub in place (first and last message unchanged) is read at its new, shorter size.
It kept counting the old text, so the calibrator learnt a factor a real provider would never report,
and the scripted long-run bench compacted far more often than a real run."""

from __future__ import annotations

import asyncio

from arreio.engine.core.messages import Message, TextPart, ToolCallPart, ToolResultPart
from arreio.engine.core.model_io import Done, ModelRequest
from arreio.engine.providers.scripted import ScriptedProvider


def _input_tokens(provider: ScriptedProvider, messages: list[Message]) -> int:
    async def go() -> int:
        events = [e async for e in provider.stream(ModelRequest(model="scripted", messages=messages))]
        done = events[-1]
        assert isinstance(done, Done)
        return done.usage.input_tokens

    return asyncio.run(go())


def _round(i: int, body: str) -> list[Message]:
    call = ToolCallPart(id=f"c{i}", name="read_file", arguments={"path": f"f{i}"})
    return [
        Message.assistant([TextPart(text="reading"), call], model="scripted"),
        Message.tool_result(ToolResultPart(call_id=f"c{i}", name="read_file", content=body)),
    ]


def test_a_result_replaced_in_place_is_read_at_its_new_size() -> None:
    replies = [{"text": f"reply {i}"} for i in range(10)]
    provider = ScriptedProvider(replies)
    history = [Message.user("go"), *_round(1, "x" * 8000), *_round(2, "y" * 40)]
    before = _input_tokens(provider, history)
    history[2] = Message.tool_result(ToolResultPart(call_id="c1", name="read_file", content="[pruned] x"))
    after = _input_tokens(provider, history)
    assert abs((before - after) - (8000 - len("[pruned] x")) / 4) <= 1  # ~4 characters a token, floored
    fresh = ScriptedProvider(replies)  # what a provider that never saw the old text reports
    assert after == _input_tokens(fresh, history) > 0
    history += _round(3, "z" * 400)  # and it goes on counting appends from there
    assert _input_tokens(provider, history) == _input_tokens(ScriptedProvider(replies), history) > after
