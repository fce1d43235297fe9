"""Small things a new user tripped on, each through the real CLI: one clear line, the right exit code."""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import run_cli


def _records(work: Path, n: int) -> list[str]:
    from arreio.engine.walls.redact import Redactor
    from arreio.memory.substores import Substores

    store = Substores(work / ".arreio", redactor=Redactor())
    return [store.append("decision", "cli", {"kind": "gate", "verdict": f"v{i}"}).id for i in range(n)]


def test_memory_substore_show_takes_a_unique_id_prefix(tmp_path: Path, arreio_env: dict) -> None:
    first, second = _records(tmp_path, 2)
    common = os.path.commonprefix([first, second])
    unique = first[: len(common) + 1]
    shown = run_cli(tmp_path, arreio_env, "memory", "decision", "show", unique)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(f"{first} [agent cli]") and '"v0"' in shown.stdout
    both = run_cli(tmp_path, arreio_env, "memory", "decision", "show", common)
    assert both.returncode == 2 and "ambiguous" in both.stderr and first in both.stderr and second in both.stderr
    assert len(both.stderr.splitlines()) == 1


def test_a_flag_spelling_an_options_value_gets_a_did_you_mean(tmp_path: Path, arreio_env: dict) -> None:
    done = run_cli(tmp_path, arreio_env, "memory", "add", "--user", "likes tea")
    assert done.returncode == 2
    assert "No such option: --user. Did you mean `--target user`?" in done.stderr
    assert not (tmp_path / ".arreio" / "USER.md").exists()


def test_kb_search_for_nothing_is_a_usage_error(tmp_path: Path, arreio_env: dict) -> None:
    done = run_cli(tmp_path, arreio_env, "kb", "search", "  ")
    assert done.returncode == 2 and "the query is empty" in done.stderr and len(done.stderr.splitlines()) == 1


def test_config_get_of_an_unknown_key_is_a_usage_error(tmp_path: Path, arreio_env: dict) -> None:
    done = run_cli(tmp_path, arreio_env, "config", "get", "max_step")
    assert done.returncode == 2 and "unknown setting 'max_step' (did you mean 'max_steps'?)" in done.stderr


def test_arreio_alone_says_where_to_start(tmp_path: Path, arreio_env: dict) -> None:
    done = run_cli(tmp_path, arreio_env)
    assert done.returncode == 2
    said = " ".join(done.stdout.split())
    assert 'Start here: `arreio chat` to talk to the agent, or `arreio run "GOAL"` for one goal' in said
    assert "Start here" not in run_cli(tmp_path, arreio_env, "sessions").stdout  # a group alone: its own help
