"""Prompt assembly from conditional blocks: conditions, caps, stable first and volatile last."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arreio.engine.core.prompt import PromptBlock, assemble_system, order_blocks
from arreio.engine.providers.testing import FixedClock


@dataclass
class Source:
    name: str
    text: str | None
    stable: bool = True
    cap: int = 12_000
    when: bool = True

    def render(self) -> str | None:
        return self.text


def test_stable_blocks_first_volatile_last_and_empty_ones_left_out(tmp_path: Path) -> None:
    sources = [
        Source("clock", "It is late.", stable=False),
        Source("memory", "MEMORY"),
        Source("skills", None),
        Source("knowledge", "   "),
    ]
    blocks = assemble_system(cwd=tmp_path, now=FixedClock().now(), sources=sources, tool_names=["read_file"])
    assert [b.name for b in blocks] == ["identity", "tools", "memory", "clock", "environment"]
    assert [b.stable for b in blocks] == [True, True, True, False, False]


def test_conditions_and_caps() -> None:
    blocks = order_blocks([PromptBlock("a", "x" * 50, cap=10), PromptBlock("b", "hidden", when=False)])
    assert [b.name for b in blocks] == ["a"] and blocks[0].text.startswith("x" * 10 + "\n[… block cut at 10 of 50")


def test_no_tools_no_tool_guidance_and_result_set_lines_only_with_those_tools(tmp_path: Path) -> None:
    now = FixedClock().now()
    assert "tools" not in [b.name for b in assemble_system(cwd=tmp_path, now=now)]
    plain = assemble_system(cwd=tmp_path, now=now, tool_names=["read_file"])[1].text
    rich = assemble_system(cwd=tmp_path, now=now, tool_names=["read_file", "result_query"])[1].text
    assert "result set" not in plain and "result_query / result_grep" in rich
    assert rich.startswith(plain)  # the shared part stays byte-identical


def test_no_prompt_text_asks_the_model_to_report_well() -> None:
    """Seed rule (invariant 6): the server checks what an answer claims; no block tells the model to
    claim only what it did, or that it is checked."""
    from arreio.engine.core.prompt import IDENTITY, RESULT_GUIDANCE, TOOL_GUIDANCE

    text = " ".join((IDENTITY, TOOL_GUIDANCE, RESULT_GUIDANCE)).lower()
    assert "claim" not in text and "the harness checks" not in text
