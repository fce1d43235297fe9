"""Start-up cost: what a run loads and compiles only when it uses it (the knowledge base, MCP servers,
the web page reader, the act words of a language the answer is not in)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import json, sys
from typer.testing import CliRunner
from arreio.cli.app import app
result = CliRunner().invoke(app, {command!r})
assert result.exit_code == 0, result.output
from arreio.engine.judgement.act_words import LANGUAGES
print(json.dumps({{
    "modules": sorted(m for m in {modules!r} if m in sys.modules),
    "compiled": {{lang.name: sorted(k for k in ("acts", "doubt") if k in vars(lang)) for lang in LANGUAGES}},
}}))
"""
UNUSED = (
    "arreio.memory.knowledge.settings",
    "arreio.memory.knowledge.fusion",
    "arreio.memory.knowledge.tool",
    "arreio.memory.knowledge.cjk",
    "arreio.engine.tools.mcp.config",
    "arreio.engine.tools.mcp.connection",
    "arreio.engine.tools.mcp.tool",
    "arreio.engine.tools.web.html_text",
)
RUN = ["run", "--goal", "G.md", "--script", "s.json"]


def _probe(work: Path, env: dict[str, str], answer: str, *calls: dict) -> dict:
    (work / "G.md").write_text("# g\n\nSay what you did.\n")
    (work / "s.json").write_text(json.dumps([*({"tool_calls": [call]} for call in calls), {"text": answer}]))
    code = PROBE.format(command=RUN, modules=UNUSED)
    out = subprocess.run([sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_run_without_a_knowledge_base_or_mcp_servers_loads_neither(tmp_path: Path, arreio_env) -> None:
    """Every run asks the knowledge base and the MCP feature whether they have anything; without a
    `knowledge:` or `mcp_servers:` section and without documents, neither settings model, the index's
    fusion and relevance, the `kb_search` tool nor the MCP client is imported (~20 ms at every start).
    A written section is still read and checked, at the run's start."""
    plain = tmp_path / "plain"
    plain.mkdir()
    assert _probe(plain, arreio_env, "Hello.")["modules"] == []
    configured = tmp_path / "configured"
    (configured / ".arreio").mkdir(parents=True)
    (configured / ".arreio" / "config.yaml").write_text(
        "knowledge:\n  rrf_k: 30\nmcp_servers:\n  off:\n    command: nothing-here\n    enabled: false\n"
    )
    loaded = _probe(configured, arreio_env, "Hello.")["modules"]
    assert loaded == [
        "arreio.engine.tools.mcp.config",
        "arreio.memory.knowledge.fusion",
        "arreio.memory.knowledge.settings",
    ]


@pytest.mark.slow
def test_a_written_section_is_still_checked_before_the_run(tmp_path: Path, arreio_env) -> None:
    from tests.conftest import run_cli

    for section in ("knowledge:\n  rrf_k: -1\n", "mcp_servers:\n  bad__name:\n    command: [x]\n"):
        (tmp_path / ".arreio").mkdir(exist_ok=True)
        (tmp_path / ".arreio" / "config.yaml").write_text(section)
        (tmp_path / "G.md").write_text("# g\n\nSay hello.\n")
        (tmp_path / "s.json").write_text(json.dumps([{"text": "Hello."}]))
        out = run_cli(tmp_path, arreio_env, *RUN)
        assert out.returncode == 5, out.stdout + out.stderr
        assert "invalid setting" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.slow
def test_a_language_compiles_its_act_words_only_when_an_answer_could_hold_them(tmp_path: Path, arreio_env) -> None:
    """The act words (~18 ms of patterns) compile at first use: a language's acts only for a clause
    that holds its speaker and its gate (`act_language.Language`), its doubt only once one of them matched."""
    english = tmp_path / "english"
    english.mkdir()
    compiled = _probe(english, arreio_env, "Hello.")["compiled"]
    assert compiled == {name: [] for name in compiled} and len(compiled) == 7
    french = tmp_path / "french"
    french.mkdir()
    (french / "notes.md").write_text("notes\n")
    read = {"name": "read_file", "arguments": {"path": "notes.md"}}
    compiled = _probe(french, arreio_env, "J'ai lu le fichier notes.md.", read)["compiled"]
    assert compiled["french"] == ["acts", "doubt"] and compiled["german"] == []
