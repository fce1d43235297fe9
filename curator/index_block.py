"""The skills index: one line per skill (name + description) in the system prompt.

Implements `arreio.engine.ports.SystemPromptBlockSource`. The block is stable (it is rendered once, at
session start, and sits in the cached prefix), lists only skills under `skills/` — archived ones are
in `skills/.archive/` and never appear — and is capped so a large library cannot crowd the prompt.
Full content loads on demand through the `skill_view` tool.
"""

from __future__ import annotations

from pathlib import Path

from arreio.curator.skills import load_skills

HEADER = (
    "## Skills\n"
    "Procedures kept from earlier work. Before following one, load it with skill_view(name); "
    "improve your own with skill_manage."
)
MAX_LINE = 300


class SkillsIndexBlock:
    """`render()` → the index block, or None when there are no live skills."""

    name = "skills"
    stable = True

    def __init__(self, skills_dir: Path, *, max_skills: int = 100, max_chars: int = 8_000) -> None:
        self.skills_dir = skills_dir
        self.max_skills = max_skills
        self.max_chars = max_chars

    def render(self) -> str | None:
        skills, _ = load_skills(self.skills_dir)
        if not skills:
            return None
        lines = [HEADER]
        used = len(HEADER)
        shown = 0
        for skill in skills:  # sorted by name: the same library renders the same bytes
            line = _line(skill.name, skill.description)
            if shown >= self.max_skills or used + len(line) + 1 > self.max_chars:
                break
            lines.append(line)
            used += len(line) + 1
            shown += 1
        if shown < len(skills):
            lines.append(f"- … and {len(skills) - shown} more; ask skill_view for a name you expect.")
        return "\n".join(lines)


def _line(name: str, description: str) -> str:
    text = " ".join(description.split())
    line = f"- {name}: {text}"
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…"
