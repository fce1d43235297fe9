"""Reasoning sent inside the answer: `<think>…</think>` at the start of the content, or typed
content chunks (`content_chunks`).

A reasoning model served without a reasoning parser (vLLM without `--reasoning-parser`, llama.cpp
with `--reasoning-format none`, older Ollama and LM Studio builds with Qwen3, QwQ or the DeepSeek-R1
distills) streams its thoughts as content, wrapped in think tags. Taken as the answer, they were
shown as the answer, and the promise gate read "I have written summary.md" in a thought and failed
the run. `ThinkTags` turns a leading think block into thinking and the rest into text, as the
pieces stream, holding back only what could still be the start of a tag.

Only a block that opens the content counts: a tag later in an answer is the answer's own text.
"""

from __future__ import annotations

from arreio.engine.core.model_io import StreamEvent, TextChunk, ThinkingChunk

OPEN, CLOSE = "<think>", "</think>"


def _partial_tail(text: str, tag: str) -> int:
    """How many characters at the end of `text` could be the start of `tag`."""
    for size in range(min(len(text), len(tag) - 1), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0


class ThinkTags:
    """Feed it the content deltas of one reply; `end` flushes what it held back."""

    def __init__(self) -> None:
        self._state = "start"  # start → (thinking → after →) text
        self._held = ""

    def feed(self, piece: str) -> list[StreamEvent]:
        self._held += piece
        out: list[StreamEvent] = []
        while self._held:
            if self._state in ("start", "after"):
                stripped = self._held.lstrip()
                if self._state == "start" and stripped.startswith(OPEN):
                    self._state, self._held = "thinking", stripped[len(OPEN) :]
                elif not stripped or (self._state == "start" and OPEN.startswith(stripped)):
                    break  # could still be the tag, or the answer's first words after it
                else:
                    # the content's own leading whitespace is kept; the gap after a thought is not
                    text = self._held if self._state == "start" else stripped
                    self._state, self._held = "text", ""
                    out.append(TextChunk(text=text))
            elif self._state == "thinking":
                at = self._held.find(CLOSE)
                if at >= 0:
                    if at:
                        out.append(ThinkingChunk(text=self._held[:at]))
                    self._state, self._held = "after", self._held[at + len(CLOSE) :]
                    continue
                keep = _partial_tail(self._held, CLOSE)
                if len(self._held) > keep:
                    out.append(ThinkingChunk(text=self._held[: len(self._held) - keep]))
                    self._held = self._held[len(self._held) - keep :]
                break
            else:
                out.append(TextChunk(text=self._held))
                self._held = ""
        return out

    def end(self) -> list[StreamEvent]:
        held, self._held = self._held, ""
        if not held or self._state == "after":
            return []
        if self._state == "thinking":  # a thought cut off (max_tokens): still a thought
            return [ThinkingChunk(text=held)]
        return [TextChunk(text=held)]


def _field(chunk: object, key: str) -> object:
    return chunk.get(key) if isinstance(chunk, dict) else getattr(chunk, key, None)


def content_chunks(chunks: list, tags: ThinkTags) -> list[StreamEvent]:
    """Content sent as typed chunks instead of a string (Mistral's reasoning models stream
    `[{"type": "thinking", "thinking": [{"type": "text", "text": …}]}]`, then `[{"type": "text", …}]`):
    thinking chunks are thinking, text chunks go the way string content goes. The string join was a
    TypeError that failed every call."""
    out: list[StreamEvent] = []
    for chunk in chunks:
        kind, text = _field(chunk, "type"), _field(chunk, "text")
        if kind == "thinking":
            inner = _field(chunk, "thinking")
            parts = inner if isinstance(inner, list) else [{"text": inner}]
            thought = "".join(t for p in parts if isinstance(t := _field(p, "text"), str))
            if thought:
                out.append(ThinkingChunk(text=thought))
        elif kind == "text" and isinstance(text, str) and text:
            out.extend(tags.feed(text))
    return out
