"""skill_view / skill_manage: on-demand loading, agent-only writes, telemetry for every view/use/patch."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from curator_fakes import write_skill

from arreio.curator.skills import USAGE_FILE, load_skills
from arreio.curator.tools import SkillManageTool, SkillViewTool, skill_tools
from arreio.curator.usage import UsageStore
from arreio.engine.providers.testing import FixedClock
from arreio.engine.tools.base import Tool, ToolError, ToolResult
from arreio.engine.tools.run_context import RunContext


def call(tool: Tool, tmp_path: Path, **args) -> ToolResult:
    return asyncio.run(tool.execute(tool.input_model.model_validate(args), RunContext(cwd=tmp_path)))


@pytest.fixture
def tools(tmp_path: Path, clock: FixedClock) -> tuple[SkillViewTool, SkillManageTool]:
    view, manage = skill_tools(tmp_path / ".arreio", clock)
    assert isinstance(view, SkillViewTool) and isinstance(manage, SkillManageTool)
    return view, manage


def usage(skills_dir: Path, clock: FixedClock, name: str):
    return UsageStore(skills_dir / USAGE_FILE, clock).get(name)


def test_factory_gives_named_tools_with_schemas(tools) -> None:
    view, manage = tools
    assert (view.name, manage.name) == ("skill_view", "skill_manage")
    assert "name" in view.input_schema()["properties"]
    assert set(manage.input_schema()["properties"]["action"]["enum"]) == {"create", "patch", "write_file"}


def test_create_stamps_agent_and_records_creation(tools, tmp_path: Path, skills_dir: Path, clock) -> None:
    _, manage = tools
    result = call(
        manage,
        tmp_path,
        action="create",
        name="triage",
        description="Sort bug reports.",
        body="# Triage\n\n1. Reproduce.\n",
        tags=["bugs"],
    )
    assert not result.is_error
    skills, diagnostics = load_skills(skills_dir)
    assert diagnostics == []
    assert [(s.name, s.created_by, s.tags) for s in skills] == [("triage", "agent", ("bugs",))]
    record = usage(skills_dir, clock, "triage")
    assert record.created_at == clock.now() and record.created_by == "agent"


def test_create_refuses_bad_names_and_existing_skills(tools, tmp_path: Path, skills_dir: Path) -> None:
    _, manage = tools
    with pytest.raises(ToolError, match="lowercase"):
        call(manage, tmp_path, action="create", name="../escape", description="d", body="b")
    write_skill(skills_dir, "taken")
    with pytest.raises(ToolError, match="already exists"):
        call(manage, tmp_path, action="create", name="taken", description="d", body="b")
    with pytest.raises(ToolError, match="description"):
        call(manage, tmp_path, action="create", name="nodesc", body="b")
    assert not (skills_dir / "nodesc").exists()


def test_view_returns_content_and_support_files_and_counts_a_view(tools, tmp_path, skills_dir, clock) -> None:
    view, _ = tools
    folder = write_skill(skills_dir, "deploy", body="Step one.\n")
    (folder / "templates").mkdir()
    (folder / "templates" / "notes.md").write_text("NOTES {v}\n", encoding="utf-8")
    result = call(view, tmp_path, name="deploy")
    assert "Step one." in result.content and "- templates/notes.md" in result.content
    clock.advance(days=1)
    assert call(view, tmp_path, name="deploy", file="templates/notes.md").content == "NOTES {v}\n"
    record = usage(skills_dir, clock, "deploy")
    assert (record.view_count, record.use_count, record.patch_count) == (1, 1, 0)
    assert record.last_used_at == clock.now() and record.last_viewed_at < clock.now()


def test_view_refuses_escapes_unknown_and_archived(tools, tmp_path, skills_dir) -> None:
    view, _ = tools
    write_skill(skills_dir, "safe")
    (tmp_path / "secret.txt").write_text("no", encoding="utf-8")
    for bad in ("../../../secret.txt", "/etc/passwd"):
        with pytest.raises(ToolError, match="inside the skill"):
            call(view, tmp_path, name="safe", file=bad)
    with pytest.raises(ToolError, match="no skill named"):
        call(view, tmp_path, name="missing")
    write_skill(skills_dir / ".archive", "gone")
    with pytest.raises(ToolError, match="archived"):
        call(view, tmp_path, name="gone")
    with pytest.raises(ToolError, match="unknown skill"):
        call(view, tmp_path, name="../safe")


def test_patch_replaces_one_exact_string_and_counts_a_patch(tools, tmp_path, skills_dir, clock) -> None:
    _, manage = tools
    write_skill(skills_dir, "mine", body="Run the tests twice.\nRun the linter.\n")
    result = call(manage, tmp_path, action="patch", name="mine", old_string="twice", new_string="once")
    assert not result.is_error
    assert "Run the tests once." in (skills_dir / "mine" / "SKILL.md").read_text()
    assert usage(skills_dir, clock, "mine").patch_count == 1
    with pytest.raises(ToolError, match="does not occur"):
        call(manage, tmp_path, action="patch", name="mine", old_string="twice", new_string="x")
    with pytest.raises(ToolError, match="occurs 2 times; include more context"):
        call(manage, tmp_path, action="patch", name="mine", old_string="Run the", new_string="x")


def test_patch_may_not_break_the_skill_or_relabel_it(tools, tmp_path, skills_dir) -> None:
    _, manage = tools
    write_skill(skills_dir, "mine")
    before = (skills_dir / "mine" / "SKILL.md").read_text()
    with pytest.raises(ToolError, match="created_by"):
        call(
            manage, tmp_path, action="patch", name="mine", old_string="created_by: agent", new_string="created_by: user"
        )
    with pytest.raises(ToolError, match="does not match its folder"):
        call(manage, tmp_path, action="patch", name="mine", old_string="name: mine", new_string="name: other")
    assert (skills_dir / "mine" / "SKILL.md").read_text() == before


def test_write_file_writes_support_files_and_restamps_skill_md(tools, tmp_path, skills_dir, clock) -> None:
    _, manage = tools
    write_skill(skills_dir, "mine")
    call(manage, tmp_path, action="write_file", name="mine", file="scripts/run.sh", content="echo hi\n")
    assert (skills_dir / "mine" / "scripts" / "run.sh").read_text() == "echo hi\n"
    call(
        manage,
        tmp_path,
        action="write_file",
        name="mine",
        file="SKILL.md",
        content="---\nname: mine\ndescription: Rewritten.\ncreated_by: user\n---\n\nNew body.\n",
    )
    skill = load_skills(skills_dir)[0][0]
    assert (skill.created_by, skill.description, skill.body.strip()) == ("agent", "Rewritten.", "New body.")
    assert usage(skills_dir, clock, "mine").patch_count == 2
    with pytest.raises(ToolError, match="must be SKILL.md or under"):
        call(manage, tmp_path, action="write_file", name="mine", file="notes.txt", content="x")
    with pytest.raises(ToolError, match="relative path"):
        call(manage, tmp_path, action="write_file", name="mine", file="scripts/../../x", content="x")


@pytest.mark.parametrize("created_by", ["user", "bundled"])
def test_skill_manage_cannot_touch_user_or_bundled_skills(tools, tmp_path, skills_dir, clock, created_by) -> None:
    _, manage = tools
    folder = write_skill(skills_dir, "theirs", created_by=created_by, body="Their words.\n")
    before = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    attempts = [
        {"action": "patch", "old_string": "Their", "new_string": "My"},
        {
            "action": "write_file",
            "file": "SKILL.md",
            "content": "---\nname: theirs\ndescription: mine now\ncreated_by: agent\n---\n",
        },
        {"action": "write_file", "file": "references/extra.md", "content": "x"},
        {"action": "create", "description": "d", "body": "b"},
    ]
    for attempt in attempts:
        with pytest.raises(ToolError, match="written by the|already exists"):
            call(manage, tmp_path, name="theirs", **attempt)
    after = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert after == before
    assert usage(skills_dir, clock, "theirs") is None  # no patch was recorded


def test_create_after_archive_starts_a_fresh_record(tools, tmp_path, skills_dir, clock) -> None:
    from dataclasses import replace

    _, manage = tools
    store = UsageStore(skills_dir / USAGE_FILE, clock)
    store.put(replace(store.ensure("reborn", "agent"), state="archived", use_count=9, archived_at=clock.now()))
    write_skill(skills_dir / ".archive", "reborn")
    clock.advance(days=3)
    call(manage, tmp_path, action="create", name="reborn", description="d", body="b")
    record = store.get("reborn")
    assert (record.state, record.use_count, record.created_at) == ("active", 0, clock.now())
    assert (skills_dir / ".archive" / "reborn" / "SKILL.md").is_file()


def test_through_the_real_chain_refusals_are_error_results(tools, tmp_path, skills_dir) -> None:
    from arreio.engine.tools.chain import run_tool
    from arreio.engine.tools.registry import ToolRegistry

    registry = ToolRegistry(tools)
    write_skill(skills_dir, "theirs", created_by="user")
    ctx = RunContext(cwd=tmp_path)
    refused = asyncio.run(
        run_tool(
            registry, "skill_manage", {"action": "patch", "name": "theirs", "old_string": "Do", "new_string": "x"}, ctx
        )
    )
    assert refused.is_error and "written by the user" in refused.content
    viewed = asyncio.run(run_tool(registry, "skill_view", {"name": "theirs"}, ctx))
    assert not viewed.is_error and "Do the thing." in viewed.content


def test_a_broken_sidecar_does_not_block_viewing(tools, tmp_path, skills_dir) -> None:
    view, _ = tools
    write_skill(skills_dir, "readable")
    (skills_dir / USAGE_FILE).write_text("{torn", encoding="utf-8")
    result = call(view, tmp_path, name="readable")
    assert "Do the thing." in result.content and "[usage not recorded:" in result.content
    assert (skills_dir / USAGE_FILE).read_text(encoding="utf-8") == "{torn"
