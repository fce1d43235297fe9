"""`arreio skills` and `arreio curator`, driven through their own Typer apps with a real state folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from curator_fakes import write_skill
from typer.testing import CliRunner

from arreio.cli.commands import curator as curator_cmd
from arreio.cli.commands import skills as skills_cmd
from arreio.curator.skills import USAGE_FILE
from arreio.engine.core.errors import UsageError
from arreio.engine.walls.redact import Redactor

runner = CliRunner()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    (state / "skills").mkdir(parents=True)
    return state


def invoke(app, home: Path, *args: str):
    return runner.invoke(app, list(args), env={"ARREIO_HOME": str(home)})


def ok(app, home: Path, *args: str) -> str:
    result = invoke(app, home, *args)
    assert result.exit_code == 0, (result.output, result.exception)
    return result.stdout


def usage_error(app, home: Path, *args: str) -> str:
    result = invoke(app, home, *args)
    assert isinstance(result.exception, UsageError), (result.output, result.exception)
    return result.exception.message


def listed(home: Path, state: str = "all") -> dict[str, dict]:
    payload = json.loads(ok(skills_cmd.app, home, "list", "--state", state, "--json"))
    return {row["entry"]: row for row in payload["skills"]}


def test_curator_run_prints_counts_and_changes_and_archives(home: Path) -> None:
    write_skill(home / "skills", "old-trick")
    write_skill(home / "skills", "user-trick", created_by="user")
    first = ok(curator_cmd.app, home, "run", "--now", "2026-01-01T00:00:00Z")
    assert "checked 2, marked stale 0, archived 0, reactivated 0, seeded 2" in first
    assert "first run" in first
    out = ok(curator_cmd.app, home, "run", "--now", "2026-05-01T00:00:00Z")
    assert "archived 1" in out
    assert "archive    old-trick: active → archived; no activity for 120 days" in out
    assert "; moved to .archive/old-trick" in out
    assert (home / "skills" / ".archive" / "old-trick" / "SKILL.md").is_file()
    assert (home / "skills" / "user-trick" / "SKILL.md").is_file()


def test_curator_run_writes_a_procedural_record_per_real_run(home: Path) -> None:
    from arreio.memory.substores import Substores

    write_skill(home / "skills", "a")
    ok(curator_cmd.app, home, "run", "--now", "2026-01-01T00:00:00Z")
    ok(curator_cmd.app, home, "run", "--dry-run", "--now", "2026-03-01T00:00:00Z")
    ok(curator_cmd.app, home, "run", "--now", "2026-03-01T00:00:00Z")
    records = Substores(home, redactor=Redactor()).records("procedural")
    assert [(r.agent, r.at) for r in records] == [
        ("curator", "2026-01-01T00:00:00.000Z"),
        ("curator", "2026-03-01T00:00:00.000Z"),
    ]
    assert records[1].payload["counts"]["marked_stale"] == 1
    assert records[1].payload["kind"] == "curator_run"


def test_build_curator_takes_injected_callbacks(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARREIO_HOME", str(home))
    write_skill(home / "skills", "a")
    seen: list[dict] = []
    audits: list[dict] = []
    curator = curator_cmd.build_curator("2026-01-01", None, None, on_record=seen.append, on_audit=audits.append)
    curator.run()
    assert len(seen) == 1 and seen == audits and seen[0]["counts"]["seeded"] == 1


def test_curator_dry_run_changes_nothing(home: Path) -> None:
    write_skill(home / "skills", "a")
    ok(curator_cmd.app, home, "run", "--now", "2026-01-01T00:00:00Z")
    before = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    out = ok(curator_cmd.app, home, "run", "--dry-run", "--now", "2027-01-01T00:00:00Z")
    assert "dry run, nothing changed" in out and "archived 1" in out
    assert {p: p.read_bytes() for p in home.rglob("*") if p.is_file()} == before


def test_curator_status_shows_last_run_and_next(home: Path) -> None:
    write_skill(home / "skills", "a")
    assert "last run: never" in ok(curator_cmd.app, home, "status", "--now", "2026-01-01T00:00:00Z")
    ok(curator_cmd.app, home, "run", "--now", "2026-01-01T00:00:00Z")
    out = ok(curator_cmd.app, home, "status", "--now", "2026-02-15T00:00:00Z")
    assert "last run: 2026-01-01T00:00:00+00:00 (checked 1," in out
    assert "a run now (2026-02-15T00:00:00+00:00) would see: checked 1, marked stale 1" in out
    assert "stale      a: active → stale; no activity for 45 days" in out
    status = json.loads(ok(curator_cmd.app, home, "status", "--json", "--now", "2026-02-15T00:00:00Z"))
    assert status["next_run"]["counts"]["marked_stale"] == 1 and status["next_run"]["dry_run"] is True


def test_curator_policy_flags_and_bad_input(home: Path) -> None:
    write_skill(home / "skills", "a")
    ok(curator_cmd.app, home, "run", "--now", "2026-01-01T00:00:00Z")
    out = ok(curator_cmd.app, home, "run", "--now", "2026-01-09T00:00:00Z", "--stale-days", "7", "--archive-days", "30")
    assert "marked stale 1" in out
    assert "not an ISO-8601 time" in usage_error(curator_cmd.app, home, "run", "--now", "yesterday")
    assert "archive_days" in usage_error(curator_cmd.app, home, "run", "--stale-days", "50", "--archive-days", "10")


def test_skills_list_filters_by_state(home: Path) -> None:
    skills = home / "skills"
    for name in ("keep", "idle", "gone"):
        write_skill(skills, name)
    ok(curator_cmd.app, home, "run", "--now", "2026-01-01T00:00:00Z")
    ok(skills_cmd.app, home, "pin", "keep")
    (skills / "gone").rename(skills / ".archive-tmp")  # keep 'gone' out of the next run
    ok(curator_cmd.app, home, "run", "--now", "2026-02-15T00:00:00Z")  # idle → stale
    (skills / ".archive-tmp").rename(skills / "gone")
    ok(curator_cmd.app, home, "run", "--now", "2026-05-01T00:00:00Z")  # gone → archived; idle → archived too
    rows = listed(home)
    assert {k: v["state"] for k, v in rows.items()} == {"keep": "active", "gone": "archived", "idle": "archived"}
    assert rows["keep"]["pinned"] is True
    assert set(listed(home, "archived")) == {"gone", "idle"}
    assert set(listed(home, "active")) == {"keep"}
    assert listed(home, "stale") == {}
    table = ok(skills_cmd.app, home, "list")
    assert "keep" in table and "archived" in table


def test_skills_list_shows_stale_and_reports_invalid_skills(home: Path) -> None:
    write_skill(home / "skills", "idle")
    (home / "skills" / "broken").mkdir()
    ok(curator_cmd.app, home, "run", "--now", "2026-01-01T00:00:00Z")
    ok(curator_cmd.app, home, "run", "--now", "2026-02-15T00:00:00Z")
    assert set(listed(home, "stale")) == {"idle"}
    result = invoke(skills_cmd.app, home, "list")
    # every warning of arreio's starts the same way (a script greps for it; these lacked the prefix)
    assert result.stderr.startswith("arreio: warning: ") and "missing-skill-file" in result.stderr
    curated = invoke(curator_cmd.app, home, "run")
    assert curated.stderr.startswith("arreio: warning: skipped invalid skill: ")
    payload = json.loads(ok(skills_cmd.app, home, "list", "--json"))
    assert [d["code"] for d in payload["diagnostics"]] == ["missing-skill-file"]


def test_skills_show(home: Path) -> None:
    folder = write_skill(home / "skills", "deploy", body="Ship it carefully.\n")
    (folder / "scripts").mkdir()
    (folder / "scripts" / "go.sh").write_text("echo go\n", encoding="utf-8")
    out = ok(skills_cmd.app, home, "show", "deploy")
    assert "Ship it carefully." in out and "scripts/go.sh" in out and "[active]" in out
    assert "no skill named 'nope'" in usage_error(skills_cmd.app, home, "show", "nope")


def test_pin_and_unpin_protect_from_the_curator(home: Path) -> None:
    write_skill(home / "skills", "precious")
    ok(curator_cmd.app, home, "run", "--now", "2026-01-01T00:00:00Z")
    assert "pinned precious" in ok(skills_cmd.app, home, "pin", "precious")
    ok(curator_cmd.app, home, "run", "--now", "2027-01-01T00:00:00Z")
    assert (home / "skills" / "precious" / "SKILL.md").is_file()
    ok(skills_cmd.app, home, "unpin", "precious")
    assert listed(home)["precious"]["pinned"] is False
    ok(curator_cmd.app, home, "run", "--now", "2027-01-02T00:00:00Z")
    assert listed(home)["precious"]["state"] == "archived"
    assert "archived; restore it first" in usage_error(skills_cmd.app, home, "pin", "precious")
    assert "no skill named" in usage_error(skills_cmd.app, home, "pin", "ghost")


def test_restore_from_the_archive_and_refusal_when_taken(home: Path) -> None:
    write_skill(home / "skills", "lost")
    ok(curator_cmd.app, home, "run", "--now", "2026-01-01T00:00:00Z")
    ok(curator_cmd.app, home, "run", "--now", "2026-06-01T00:00:00Z")
    out = ok(skills_cmd.app, home, "restore", "lost")
    assert "restored lost" in out
    assert (home / "skills" / "lost" / "SKILL.md").is_file()
    record = json.loads((home / "skills" / USAGE_FILE).read_text())["skills"]["lost"]
    assert record["state"] == "active" and record["archived_at"] is None and record["last_restored_at"]
    write_skill(home / "skills" / ".archive", "lost")  # an older copy in the archive
    assert "already exists" in usage_error(skills_cmd.app, home, "restore", "lost")
    assert "no archived skill" in usage_error(skills_cmd.app, home, "restore", "never-was")


def test_adopt_hands_a_user_skill_to_the_curator(home: Path) -> None:
    folder = home / "skills" / "mine"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\n# my own notes\nname: mine\ndescription: Mine.\ncreated_by: user\n---\n\nBody stays.\n", encoding="utf-8"
    )
    ok(curator_cmd.app, home, "run", "--now", "2026-01-01T00:00:00Z")
    ok(curator_cmd.app, home, "run", "--now", "2027-01-01T00:00:00Z")
    assert folder.is_dir()  # a user skill is never touched
    assert "adopted mine" in ok(skills_cmd.app, home, "adopt", "mine")
    text = (folder / "SKILL.md").read_text()
    assert "# my own notes" in text and "created_by: agent" in text and "adopted_from: user" in text
    assert text.endswith("---\n\nBody stays.\n")
    assert "already agent-managed" in ok(skills_cmd.app, home, "adopt", "mine")
    ok(curator_cmd.app, home, "run", "--now", "2028-01-01T00:00:00Z")
    assert (home / "skills" / ".archive" / "mine" / "SKILL.md").is_file()


def test_adopt_refuses_bundled_and_unknown(home: Path) -> None:
    write_skill(home / "skills", "shipped", created_by="bundled")
    assert "bundled" in usage_error(skills_cmd.app, home, "adopt", "shipped")
    assert "no skill named" in usage_error(skills_cmd.app, home, "adopt", "ghost")


def test_show_on_a_broken_skill_says_what_is_wrong_with_it(in_project) -> None:
    import shutil

    from typer.testing import CliRunner

    from arreio.cli.app import app
    from tests.conftest import REPO

    shutil.copytree(REPO / "fixtures" / "skills" / "invalid-yaml", in_project / ".arreio" / "skills")
    name = next(p.name for p in (in_project / ".arreio" / "skills").iterdir() if p.is_dir())
    result = CliRunner().invoke(app, ["skills", "show", name])
    assert result.exit_code == 2
    assert f"skill '{name}' is not loaded: invalid YAML in frontmatter at line" in result.stderr
    assert "<unicode string>" not in result.stderr


def test_show_with_an_empty_or_dot_name_is_no_skill_not_a_broken_one(home: Path) -> None:
    """Regression: `skills show ""` (or `.`) said the skill was not loaded and to fix
    skills/SKILL.md, a file that is not there: the name was taken for the skills folder itself."""
    write_skill(home / "skills", "real-one")
    for name in ("", ".", " "):
        assert usage_error(skills_cmd.app, home, "show", name) == (
            f"no skill named {name!r}; see `arreio skills list --state all`"
        )
