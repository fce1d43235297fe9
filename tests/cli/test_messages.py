"""Messages that help: did-you-mean for plan keys, one readable thinking error, readable
audit lines, and `memory <substore> list --long` (the default list stays exactly as scripts parse it)."""

from __future__ import annotations

import json
import re
from pathlib import Path


def test_a_misspelt_plan_key_gets_a_suggestion(cli) -> None:
    Path("a.yaml").write_text("units:\n  - {id: a, goal: x, need: [b]}\n")
    Path("b.yaml").write_text("unit:\n  - {id: a, goal: x}\n")
    first = cli("run", "--plan", "a.yaml", "--offline")
    assert first.exit_code == 2 and "a.yaml:2: units.0.need: unknown key 'need' (did you mean 'needs'?)" in first.stderr
    second = cli("run", "--plan", "b.yaml", "--offline")
    assert (
        second.exit_code == 2 and "unknown key 'unit' (did you mean 'units'?)" in second.stderr
    )  # not "units: Field required"


def test_a_bad_thinking_value_says_what_is_allowed(cli, monkeypatch) -> None:
    Path("g.md").write_text("# hi\n")
    monkeypatch.setenv("ARREIO_THINKING", "lots")
    result = cli("run", "--goal", "g.md", "--offline")
    assert result.exit_code == 5
    assert (
        "invalid setting 'thinking' from environment: thinking is off, adaptive or a number of tokens" in result.stderr
    )
    assert "literal" not in result.stderr


def test_audit_tail_reads_as_text(cli) -> None:
    Path("g.md").write_text("# hi\n")
    cli("run", "--goal", "g.md", "--offline")
    lines = cli("audit", "tail").stdout.splitlines()
    assert lines and not any("{'" in line or "resumed=False" in line for line in lines)  # no dict reprs
    assert any(re.search(r"run_start\s+\S+\s+offline$", line) for line in lines)


def test_memory_list_long_adds_kind_subject_verdict_and_the_default_is_unchanged(cli) -> None:
    Path("g.md").write_text("# hi\n")
    cli("run", "--goal", "g.md", "--offline")  # its promise gate writes a decision record
    plain = cli("memory", "decision", "list").stdout.splitlines()
    assert re.fullmatch(r"  dec-\w+ \[agent arreio\] at \S+Z", plain[1])  # the seed's shape, nothing after
    long = cli("memory", "decision", "list", "--long").stdout.splitlines()
    assert long[1].startswith(plain[1]) and long[1].endswith("gate · promise · passed")
    records = json.loads(cli("memory", "decision", "list", "--json").stdout)["records"]
    assert records[0]["payload"]["kind"] == "gate"


def test_a_mistyped_tools_flag_is_bad_usage_with_a_suggestion(cli) -> None:
    Path("g.md").write_text("# hi\n")
    flag = cli("run", "--goal", "g.md", "--offline", "--tools", "read_fle")
    assert flag.exit_code == 2 and "unknown tool(s) read_fle (did you mean 'read_file'?)" in flag.stderr
    Path(".arreio").mkdir(exist_ok=True)
    Path(".arreio/config.yaml").write_text("tools_disabled: [shel]\n")
    configured = cli("run", "--goal", "g.md", "--offline")
    assert configured.exit_code == 5 and "shel (did you mean 'shell'?)" in configured.stderr  # config: exit 5


def test_emoji_codes_in_model_text_and_files_are_shown_as_written(cli) -> None:
    """Regression: rich turned `:x:` into ❌ in the live view, `sessions show` and `kb search`
    (`root:x:0:0` in /etc/passwd read `root❌0:0`). Text is shown exactly as written."""
    Path("r.yaml").write_text('- text: "Status :x: failed :smile:"\n')
    run = cli("run", "x", "--script", "r.yaml")
    assert run.exit_code == 0 and "Status :x: failed :smile:" in run.stdout and "❌" not in run.stdout
    session = re.search(r"session (\S+)", run.stdout).group(1)
    shown = cli("sessions", "show", session)
    assert "Status :x: failed :smile:" in shown.stdout and "❌" not in shown.stdout
    Path("s.md").write_text("# S\nroot:x:0:0 and :warning: here\n")
    assert cli("kb", "add", "s.md").exit_code == 0
    found = cli("kb", "search", "root")
    assert "root:x:0:0 and :warning: here" in found.stdout and "⚠" not in found.stdout


def test_a_validator_s_refusal_of_an_option_reads_as_ours(cli) -> None:
    """Regression: 'Invalid value for '--target' / '-t': Value error, 'bogus' is not one of …'."""
    result = cli("memory", "add", "x", "--target", "bogus")
    assert result.exit_code == 2 and "'--target' / '-t': 'bogus' is not one of 'memory', 'user'" in result.stderr
    assert "Value error" not in result.stderr
