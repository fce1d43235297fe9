"""Prompt assembly from conditional blocks: stable blocks first, volatile ones last, so the provider's
prefix cache holds across turns and sessions (docs/architecture.md section 2, "assembly").

Blocks come from the engine (identity, tool guidance, environment) and from ports the composition root
fills (memory snapshot, skills index, ...). A block that renders to nothing is left out; each has a cap.
"""

from __future__ import annotations

import platform
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from arreio.engine.core.model_io import SystemBlock
from arreio.engine.core.ports import SystemPromptBlockSource

BLOCK_CAP_CHARS = 12_000

IDENTITY = """You are arreio, an agent working in the user's terminal on the goal they gave you.
Work step by step with the tools you have. Read before you change; keep changes small and verifiable.
When the goal is done, answer with a short, factual account of what you did and where the results are."""

TOOL_GUIDANCE = """Tools:
- Paths are relative to the working directory; you cannot reach outside it.
- Prefer read_file/list_dir/grep over shell for looking around; use edit_file for small changes.
- A tool error is information: read it, adjust, and do not repeat the same failing call."""


RESULT_GUIDANCE = """- A very large result arrives as a result set: a handle, its schema and a first look. Ask
  result_query / result_grep for what you need instead of re-running the command.
- A result marked [pruned to save context: …] keeps a record of what it showed; use that record and
  your own notes before opening the saved raw text."""


# How a goal's piped context begins (`git diff | arreio run "Review this"`): the CLI writes it, and
# the offline model stops reading the goal for instructions there (the piped text is data).
PIPED_INPUT = "Piped input (arreio's stdin"

# How the files a chat message names with `@path` are attached below it (cli/chat/mentions.py): their
# text is context, and the offline model stops reading the message for instructions there too.
ATTACHED = "\n\n[arreio: attached by the user as context for the message above]\n\n"

# How a plan's first unit message (`--goal` with `--plan`) sets the run's goal apart from the unit's
# own instruction: the goal says what the whole plan is for, each unit does what its own goal says.
# The offline model takes only what follows this line as instructions (the goal above is context).
PLAN_UNITS = "\n\n---\nThe plan does the goal above in units, one at a time; do only this unit now.\n"


@dataclass(frozen=True)
class PromptBlock:
    """One candidate block: it enters only `when` its condition holds and it has text; it is cut at
    `cap` characters; stable blocks precede volatile ones so the provider's prefix cache holds."""

    name: str
    text: str
    stable: bool = True
    cap: int = BLOCK_CAP_CHARS
    when: bool = True


def cap(text: str, limit: int = BLOCK_CAP_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[… block cut at {limit} of {len(text)} chars]"


def order_blocks(blocks: Iterable[PromptBlock]) -> list[SystemBlock]:
    """Conditions applied, caps applied, stable first (in given order), volatile last. Pure."""
    kept = [b for b in blocks if b.when and b.text and b.text.strip()]
    rendered = [SystemBlock(name=b.name, text=cap(b.text.strip(), b.cap), stable=b.stable) for b in kept]
    return [b for b in rendered if b.stable] + [b for b in rendered if not b.stable]


def environment_block(cwd: Path, now: datetime) -> SystemBlock:
    text = (
        f"Environment:\n- Working directory: {cwd}\n- Platform: {platform.system()} {platform.machine()}\n"
        f"- Date: {now.strftime('%Y-%m-%d')} (UTC)"
    )
    return SystemBlock(name="environment", text=text, stable=False)


def assemble_system(
    *, cwd: Path, now: datetime, sources: Iterable[SystemPromptBlockSource] = (), tool_names: Iterable[str] = ()
) -> list[SystemBlock]:
    """The system prompt for a new session: identity, tool guidance (when tools exist; with the result-set
    lines when those tools exist), the ports' blocks (memory snapshot, skills index, knowledge hints —
    each with its own condition and cap; stable ones first), then the volatile environment block."""
    names = list(tool_names)
    guidance = TOOL_GUIDANCE + ("\n" + RESULT_GUIDANCE if "result_query" in names else "")
    blocks = [PromptBlock("identity", IDENTITY), PromptBlock("tools", guidance, when=bool(names))]
    for source in sources:
        blocks.append(
            PromptBlock(
                source.name,
                source.render() or "",
                stable=source.stable,
                cap=getattr(source, "cap", BLOCK_CAP_CHARS),
                when=getattr(source, "when", True),
            )
        )
    env = environment_block(cwd, now)
    blocks.append(PromptBlock(env.name, env.text, stable=False))
    return order_blocks(blocks)
