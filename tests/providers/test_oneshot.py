"""`ask`: one whole answer from a provider, errors as data."""

from __future__ import annotations

import asyncio

from arreio.engine.core.messages import Message
from arreio.engine.core.model_io import ModelRequest, TextChunk
from arreio.engine.providers.oneshot import ask
from arreio.engine.providers.testing import ScriptedProvider

REQUEST = ModelRequest(model="m", messages=[Message.user("hi")])


def test_text_and_usage_are_collected() -> None:
    answer = asyncio.run(ask(ScriptedProvider([{"text": "hello there", "chunk_chars": 3}]), REQUEST))
    assert answer.text == "hello there" and answer.error is None and answer.usage.output_tokens > 0


def test_errors_come_back_as_data() -> None:
    answer = asyncio.run(ask(ScriptedProvider([{"error": {"status": 500, "message": "boom"}}]), REQUEST))
    assert answer.error is not None and answer.error.kind == "retryable"
    try:
        answer.raise_for_error()
    except RuntimeError as error:
        assert str(error) == "boom"
    else:  # pragma: no cover
        raise AssertionError("raise_for_error did not raise")


class Unfinished:
    name = "unfinished"

    async def stream(self, request):
        yield TextChunk(text="half an ans")


def test_a_stream_without_done_is_an_error() -> None:
    answer = asyncio.run(ask(Unfinished(), REQUEST))
    assert answer.text == "half an ans" and answer.error is not None
