"""The skills loader: one diagnostic per bad skill, never a crash (one fixture folder per failure mode)."""

from __future__ import annotations

from datetime import UTC
from pathlib import Path

import pytest
from curator_fakes import FIXTURES, clock_at, write_skill

from arreio.curator.skills import MAX_BODY, load_skills


@pytest.mark.parametrize(
    ("case", "code", "fragment"),
    [
        ("invalid-yaml", "invalid-yaml", "invalid YAML"),
        ("missing-description", "missing-description", "no 'description'"),
        ("name-mismatch", "name-mismatch", "does not match its folder"),
        ("missing-frontmatter", "missing-frontmatter", "must start with a '---' line"),
        ("invalid-name", "invalid-name", "lowercase"),
        ("invalid-created-by", "invalid-created-by", "agent, user, bundled"),
        ("description-too-long", "description-too-long", "limit is 1024"),
        ("missing-skill-file", "missing-skill-file", "no SKILL.md"),
        ("not-a-mapping", "invalid-yaml", "mapping"),
    ],
)
def test_each_failure_mode_is_one_diagnostic(case: str, code: str, fragment: str) -> None:
    skills, diagnostics = load_skills(FIXTURES / case)
    assert skills == []
    assert len(diagnostics) == 1
    assert diagnostics[0].code == code
    assert fragment in diagnostics[0].message
    assert diagnostics[0].path.is_relative_to(FIXTURES / case)


def test_duplicate_name_keeps_the_first_root_and_reports_the_second() -> None:
    root = FIXTURES / "duplicate-name"
    skills, diagnostics = load_skills([root / "first", root / "second"])
    assert [(s.name, s.description) for s in skills] == [("twin", "The first definition wins.")]
    assert [d.code for d in diagnostics] == ["duplicate-name"]
    assert diagnostics[0].path == root / "second" / "twin" / "SKILL.md"


def test_valid_library_loads_with_metadata_and_support_files() -> None:
    skills, diagnostics = load_skills(FIXTURES / "valid")
    assert diagnostics == []
    by_name = {s.name: s for s in skills}
    assert list(by_name) == ["code-review", "deploy-checklist"]
    deploy = by_name["deploy-checklist"]
    assert deploy.created_by == "agent"
    assert deploy.tags == ("release", "ops")
    assert deploy.version == "2"
    assert "# Deploy checklist" in deploy.body
    assert deploy.support_files() == ["scripts/tag.sh", "templates/notes.md"]
    assert by_name["code-review"].created_by == "user"


def test_bad_skills_do_not_hide_good_ones(skills_dir: Path) -> None:
    write_skill(skills_dir, "good-one")
    write_skill(skills_dir, "good-two", created_by="user")
    bad = skills_dir / "bad"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: bad\ndescription: [oops\n---\n", encoding="utf-8")
    skills, diagnostics = load_skills(skills_dir)
    assert [s.name for s in skills] == ["good-one", "good-two"]
    assert [d.code for d in diagnostics] == ["invalid-yaml"]


def test_body_over_the_limit_is_a_diagnostic(skills_dir: Path) -> None:
    write_skill(skills_dir, "huge", body="x" * (MAX_BODY + 1))
    skills, diagnostics = load_skills(skills_dir)
    assert skills == []
    assert diagnostics[0].code == "body-too-long"


def test_missing_created_by_is_read_as_user_so_the_curator_leaves_it_alone(skills_dir: Path) -> None:
    write_skill(skills_dir, "hand-made", created_by=None)
    skills, _ = load_skills(skills_dir)
    assert skills[0].created_by == "user"


def test_archive_and_sidecar_are_not_skills(skills_dir: Path) -> None:
    write_skill(skills_dir, "live")
    write_skill(skills_dir / ".archive", "old")
    (skills_dir / ".usage.json").write_text("{}", encoding="utf-8")
    skills, diagnostics = load_skills(skills_dir)
    assert [s.name for s in skills] == ["live"]
    assert diagnostics == []


def test_missing_root_is_empty_not_an_error(tmp_path: Path) -> None:
    assert load_skills(tmp_path / "nowhere") == ([], [])


def test_usage_sidecar_version_1_fixture_still_loads(tmp_path: Path) -> None:
    """Freezes the on-disk sidecar format (v1); a file without the newer `last_restored_at` loads too."""
    import shutil
    from datetime import datetime

    from arreio.curator.curator import Curator
    from arreio.curator.skills import USAGE_FILE
    from arreio.curator.usage import UsageStore

    skills_dir = tmp_path / "skills"
    shutil.copytree(FIXTURES / "valid", skills_dir)
    clock = clock_at(datetime(2026, 3, 10, tzinfo=UTC))
    data = UsageStore(skills_dir / USAGE_FILE, clock).load()
    deploy = data.records["deploy-checklist"]
    assert (deploy.state, deploy.use_count, deploy.view_count, deploy.patch_count) == ("stale", 4, 7, 2)
    assert deploy.last_activity() == datetime(2026, 1, 20, 10, tzinfo=UTC)
    assert data.records["code-review"].last_restored_at is None
    assert data.last_run_at == datetime(2026, 3, 1, 9, tzinfo=UTC)
    plan = Curator(skills_dir, clock).status().next_run
    assert plan.changes == []  # stale for 49 days: not yet archived; the user skill is never touched
    clock.set(datetime(2026, 4, 25, tzinfo=UTC))  # 95 days idle
    assert [c.transition.kind for c in Curator(skills_dir, clock).status().next_run.changes] == ["archive"]


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("{not json", "not readable JSON"),
        ('{"version": 99}', "version 99"),
        ("[]", "not a usage file"),
        ('{"version": 1, "skills": {"x": {"state": "active"}}}', "no created_at"),
    ],
)
def test_a_bad_sidecar_is_a_clear_usage_error(tmp_path: Path, content: str, fragment: str) -> None:

    from arreio.curator.usage import UsageStore
    from arreio.engine.core.errors import UsageError

    path = tmp_path / ".usage.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(UsageError, match=fragment):
        UsageStore(path, clock_at()).load()
    assert path.read_text(encoding="utf-8") == content  # never overwritten
