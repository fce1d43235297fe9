"""Start-up cost: the SDKs and litellm are imported only by a run that needs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli

CASSETTE = str(Path(__file__).resolve().parents[2] / "fixtures" / "cassettes" / "offline-quickstart.v1.cassette.jsonl")
HEAVY = ("anthropic", "openai", "litellm", "numpy", "httpx2", "mcp", "pypdf", "jsonschema", "opentelemetry")

PROBE = """
import json, sys
from typer.testing import CliRunner
from arreio.cli.app import app
for args in {commands!r}:
    CliRunner().invoke(app, args)
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))
"""


@pytest.mark.slow
def test_help_and_inspection_commands_do_not_import_sdks(tmp_path) -> None:
    commands = [
        ["--help"],
        ["run", "--help"],
        ["sessions", "list"],
        ["sessions", "--help"],
        ["memory", "show"],
        ["memory", "decision", "list"],
        ["skills", "list"],
        ["curator", "status"],
        ["mcp", "--help"],
        ["mcp", "list"],
        ["mcp", "serve", "--help"],
        ["sessions", "search", "anything"],
        ["sessions", "export", "--help"],
        ["cassette", "--help"],
        ["cassette", "show", CASSETTE],
        ["cassette", "diff", CASSETTE, CASSETTE],
        ["approve", "--help"],
        ["audit", "verify"],
        ["audit", "tail"],
        ["kb", "--help"],
        ["kb", "stats"],
        ["learn", "--help"],
        ["config", "--help"],
        ["config", "list"],
        ["config", "get", "sandbox.mode"],
        ["config", "path"],
        ["models", "--help"],
        ["models"],
        ["doctor", "--help"],
        ["doctor", "--no-mcp"],
    ]
    code = PROBE.format(commands=commands, heavy=HEAVY)
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


@pytest.mark.slow
def test_offline_run_does_not_import_sdks(tmp_path) -> None:
    (tmp_path / "G.md").write_text("# g\n\nRead `G.md` and write `out.md`.\n")
    code = PROBE.format(commands=[["run", "--goal", "G.md", "--offline"]], heavy=HEAVY)
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
    assert (tmp_path / "out.md").exists()


@pytest.mark.slow
def test_typers_help_renderer_loads_with_the_first_help_not_with_every_command(tmp_path) -> None:
    """`typer.rich_utils` (~20 ms of imports) is for help; a help loads it without markdown-it or
    pygments, which it imports at its top and never uses here."""
    (tmp_path / "G.md").write_text("# g\n\nRead `G.md` and write `out.md`.\n")
    renderer = ("typer.rich_utils", "markdown_it", "pygments")
    cases = (([["run", "--goal", "G.md", "--offline"]], []), ([["run", "--help"]], ["typer.rich_utils"]))
    for commands, loaded in cases:
        code = PROBE.format(commands=commands, heavy=renderer)
        out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout.strip().splitlines()[-1]) == loaded, commands


SCAN = ("arreio.memory.scan_conduct", "arreio.memory.scan_recipes", "arreio.memory.normalise")


@pytest.mark.slow
def test_a_run_with_nothing_to_scan_does_not_compile_the_scan(tmp_path) -> None:
    """The memory scan's rules and normaliser (~100 ms of patterns and tables at every start) load
    with the first text scanned: a run with no memory entry and no agent skill never needs them, and
    one with an entry still has it scanned (a hostile one is blocked in the prompt)."""
    (tmp_path / "G.md").write_text("# g\n\nRead `G.md` and write `out.md`.\n")
    code = PROBE.format(commands=[["run", "--goal", "G.md", "--offline"]], heavy=SCAN)
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
    (tmp_path / ".arreio").mkdir(exist_ok=True)
    (tmp_path / ".arreio" / "MEMORY.md").write_text("The tests run with `pytest -q`.\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == sorted(SCAN)


UNUSED = ("arreio.learning.stage", "arreio.engine.providers.offline.model")


@pytest.mark.slow
def test_a_scripted_run_without_learn_imports_neither_the_learning_layer_nor_the_offline_model(tmp_path) -> None:
    """The learning pass loads with the first run that learns (`--learn`), and the offline model with
    the first run it plays: a scripted run needs neither (the gates read goals with `offline.goal`)."""
    script = [{"tool_calls": [{"name": "write_file", "arguments": {"path": "out.md", "content": "g"}}]}]
    runs = {
        "scripted": ["run", "--goal", "G.md", "--script", "s.json"],
        "learning": ["run", "--goal", "G.md", "--offline", "--learn"],
    }
    loaded = {}
    for name, command in runs.items():
        work = tmp_path / name
        work.mkdir()
        (work / "G.md").write_text("# g\n\nRead `G.md` and write `out.md`.\n")
        (work / "s.json").write_text(json.dumps(script))
        code = PROBE.format(commands=[command], heavy=UNUSED)
        out = subprocess.run([sys.executable, "-c", code], cwd=work, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert (work / "out.md").exists()
        loaded[name] = json.loads(out.stdout.strip().splitlines()[-1])
    assert loaded == {"scripted": [], "learning": sorted(UNUSED)}


SEARCH = ("arreio.memory.knowledge.index", "arreio.memory.knowledge.sqlite_backend")


@pytest.mark.slow
def test_the_knowledge_index_loads_with_the_first_search_not_with_every_run(tmp_path, arreio_env) -> None:
    """A run offers `kb_search` when the knowledge base holds documents, and opens the index (SQLite,
    FTS5, fusion: ~12 ms of imports) only when the agent searches."""
    env = {**arreio_env, "ARREIO_KB_EMBEDDER": "none"}
    (tmp_path / "notes.md").write_text("# Notes\n\nThe compost heap is turned every Friday.\n")
    (tmp_path / "G.md").write_text("# g\n\nWrite `out.md`.\n")
    added = run_cli(tmp_path, env, "kb", "add", "notes.md")
    assert added.returncode == 0, added.stderr
    write = {"name": "write_file", "arguments": {"path": "out.md", "content": "g"}}
    search = {"name": "kb_search", "arguments": {"query": "compost"}}
    loaded = {}
    for name, calls in {"no search": [write], "a search": [search, write]}.items():
        (tmp_path / "s.json").write_text(json.dumps([{"tool_calls": [call]} for call in calls]))
        code = PROBE.format(commands=[["run", "--goal", "G.md", "--script", "s.json"]], heavy=SEARCH)
        out = subprocess.run(
            [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0, out.stderr
        loaded[name] = json.loads(out.stdout.strip().splitlines()[-1])
    assert loaded == {"no search": [], "a search": sorted(SEARCH)}
