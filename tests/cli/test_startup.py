"""Start-up: `arreio --version` is answered before the CLI is built, and `arreio --help` renders
without markdown-it and pygments (help_style.load_help_renderer). Real processes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

PROBE = """
import json, sys
sys.argv = ["arreio", *{args!r}]
from arreio.cli.launch import main
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(m for m in ("typer", "rich", "arreio.cli.app", "markdown_it", "pygments") if m in sys.modules)))
"""


def _probe(*args: str) -> tuple[list[str], str]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=list(args))], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    return json.loads(lines[-1]), "\n".join(lines[:-1])


def test_version_is_answered_without_building_the_cli() -> None:
    loaded, printed = _probe("--version")
    assert loaded == [] and printed.startswith("arreio ")
    from importlib.metadata import version

    assert printed == f"arreio {version('arreio')}"  # the same answer importlib.metadata gives


def test_help_renders_without_markdown_and_pygments() -> None:
    loaded, printed = _probe("--help")
    assert "arreio.cli.app" in loaded and "markdown_it" not in loaded and "pygments" not in loaded
    assert "Usage: arreio" in printed and "kb" in printed


def test_the_real_rich_markdown_still_loads_after_help(tmp_path: Path) -> None:
    code = (
        "from arreio.cli import app\nimport rich.markdown, rich.traceback\n"
        "import io\nfrom rich.console import Console\nc = Console(file=io.StringIO(), record=True, width=40)\n"
        "c.print(rich.markdown.Markdown('# Title\\n\\n*x*'))\n"
        "print(type(rich.traceback.Traceback).__name__, 'Title' in c.export_text())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["type", "True"]


FULL_TREE = """
import sys
from arreio.cli.app import make_app
try:
    make_app()(args=sys.argv[1:], prog_name="arreio")
except SystemExit as done:
    sys.exit(done.code)
"""


def _help(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)


def test_root_help_from_the_listing_is_the_whole_trees_help() -> None:
    """`arreio --help` builds every command as its name and help only (no look at their parameters);
    what it prints must be what the whole command tree prints: plain, styled, narrow and wide, and a
    bare `arreio` (help, exit 2)."""
    import os

    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM", "COLUMNS")}
    styles = [{"COLUMNS": "60"}, {"COLUMNS": "100"}, {"COLUMNS": "180", "FORCE_COLOR": "1", "TERM": "xterm-256color"}]
    for style in styles:
        env = {**base, **style}
        for args in (["--help"], ["-h"], []):
            listed = _help([sys.executable, "-c", "from arreio.cli.launch import main; main()", *args], env)
            whole = _help([sys.executable, "-c", FULL_TREE, *args], env)
            assert (listed.returncode, listed.stdout, listed.stderr) == (
                whole.returncode,
                whole.stdout,
                whole.stderr,
            ), (style, args)
            assert listed.returncode == (2 if not args else 0)
            shown = re.sub(r"\x1b\[[0-9;]*m", "", listed.stdout)
            assert "sessions" in shown and "--version" in shown


def test_a_command_still_gets_its_whole_help_and_runs() -> None:
    out = subprocess.run(
        [sys.executable, "-c", "from arreio.cli.launch import main; main()", "sessions", "list", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "arreio sessions list" in out.stdout and "--json" in out.stdout
