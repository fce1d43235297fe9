"""The skills index: one line per skill (name + description) in the system prompt.

Implements `arreio.engine.core.ports.SystemPromptBlockSource`. The block is stable (it is rendered once, at
session start, and sits in the cached prefix), lists only skills under `skills/` — archived ones are
in `skills/.archive/` and never appear — and is capped so a large library cannot crowd the prompt.
Full content loads on demand through the `skill_view` tool.

Every skill passes the security scan (`skills.scan_skill_folder`: name, description, body and every
other file of its folder) before it is listed. One that fails is left out — never silently: the
block says how many were left out (not
their names, which may be the problem), and `notices` tells the user which and why. It stays on
disk untouched; the curator never deletes.
"""

from __future__ import annotations

from pathlib import Path

from arreio.curator.skills import load_skills, scan_skill_folder

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
        self.notices: list[str] = []  # what the user should hear (skills left out), shown as warnings

    def render(self) -> str | None:
        loaded, _ = load_skills(self.skills_dir)
        skills, self.notices = [], []
        for skill in loaded:
            blocked = scan_skill_folder(skill)
            if blocked is None:
                skills.append(skill)
            else:
                self.notices.append(
                    f"skill {skill.name!r} is left out of the skills index: {blocked.describe(quote=False)}. "
                    f"It stays on disk "
                    f"({skill.path}); fix or archive it (`arreio skills show {skill.name}`)"
                )
        left_out = (
            f"- {len(self.notices)} skill{'' if len(self.notices) == 1 else 's'} left out: failed the security scan."
            if self.notices
            else None
        )
        if not skills:
            return f"{HEADER}\n{left_out}" if left_out else None
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
        if left_out:
            lines.append(left_out)
        return "\n".join(lines)


def _line(name: str, description: str) -> str:
    text = " ".join(description.split())
    line = f"- {name}: {text}"
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…"
