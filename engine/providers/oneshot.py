"""One whole answer from a provider, for the harness's own small questions (the compaction summary,
a validator judge, the learning proposer). The turn loop streams; these only need the text."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from arreio.engine.core.model_io import Done, ModelRequest, ProviderError, TextChunk, Usage
from arreio.engine.core.ports import Provider


@dataclass
class Answer:
    text: str = ""
    usage: Usage = field(default_factory=Usage)
    error: ProviderError | None = None

    def raise_for_error(self) -> str:
        """The text, or a RuntimeError carrying the provider's reason."""
        if self.error is not None:
            raise RuntimeError(self.error.message)
        return self.text


async def ask(provider: Provider, request: ModelRequest, progress: Callable[[], None] | None = None) -> Answer:
    """Drain one stream into an `Answer`; a stream that ends without `Done` counts as an error.
    `progress` is called on every chunk (a caller that waits while the stream produces)."""
    answer, finished, parts = Answer(), False, []
    async for chunk in provider.stream(request):
        if progress is not None:
            progress()
        if isinstance(chunk, TextChunk):
            parts.append(chunk.text)  # joined once: `answer.text += …` copied the text so far each time
        elif isinstance(chunk, Done):
            finished = True
            answer.usage, answer.error = chunk.usage, chunk.error
    answer.text = "".join(parts)
    if not finished:
        answer.error = ProviderError(kind="retryable", message="the reply ended without finishing")
    return answer
