"""The skills index block for the system prompt."""

from __future__ import annotations

from pathlib import Path

from curator_fakes import clock_at, write_skill

from arreio.curator.index_block import SkillsIndexBlock
from arreio.engine.core.ports import SystemPromptBlockSource


def test_is_a_stable_block_source_named_skills(skills_dir: Path) -> None:
    block = SkillsIndexBlock(skills_dir)
    assert isinstance(block, SystemPromptBlockSource)
    assert (block.name, block.stable) == ("skills", True)


def test_none_without_live_skills(skills_dir: Path, tmp_path: Path) -> None:
    assert SkillsIndexBlock(tmp_path / "missing").render() is None
    write_skill(skills_dir / ".archive", "old")
    (skills_dir / "broken").mkdir()
    assert SkillsIndexBlock(skills_dir).render() is None


def test_one_line_per_skill_sorted_archived_excluded(skills_dir: Path) -> None:
    write_skill(skills_dir, "zeta", description="Last one.")
    write_skill(skills_dir, "alpha", description="First one.", created_by="user")
    write_skill(skills_dir / ".archive", "hidden", description="Should not show.")
    text = SkillsIndexBlock(skills_dir).render()
    assert text is not None
    lines = text.splitlines()
    assert lines[0] == "## Skills"
    assert lines[-2:] == ["- alpha: First one.", "- zeta: Last one."]
    assert "hidden" not in text
    assert SkillsIndexBlock(skills_dir).render() == text  # same library, same bytes


def test_capped_by_count_and_characters(skills_dir: Path) -> None:
    for index in range(12):
        write_skill(skills_dir, f"skill-{index:02d}", description="word " * 40)
    by_count = SkillsIndexBlock(skills_dir, max_skills=5).render()
    assert by_count is not None
    assert sum(line.startswith("- skill-") for line in by_count.splitlines()) == 5
    assert by_count.splitlines()[-1].startswith("- … and 7 more")
    by_chars = SkillsIndexBlock(skills_dir, max_chars=1_000).render()
    assert by_chars is not None and len(by_chars) < 1_100
    assert "more" in by_chars.splitlines()[-1]


def test_skills_feature_offers_the_tools_and_the_index(tmp_path: Path) -> None:

    from arreio.curator.feature import SkillsFeature
    from arreio.engine.core.config import Settings
    from arreio.engine.tools.run_context import RunContext

    state = tmp_path / ".arreio"
    ctx = RunContext(cwd=tmp_path, state_dir=state, settings=Settings(), clock=clock_at(), env={})
    feature = SkillsFeature()
    assert [tool.name for tool in feature.tools(ctx)] == ["skill_view", "skill_manage"]
    [block] = feature.prompt_blocks(ctx)
    assert block.render() is None
    write_skill(state / "skills", "hello", description="Say hello.")
    assert block.render().endswith("- hello: Say hello.")  # type: ignore[union-attr]
