"""`arreio checkpoints prune` says which runs lose their checkpoints and asks first, and a bare `m` is
refused (`--older-than 1m` meant a month and pruned everything older than a minute). Real processes,
a real pty for the question."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import ARREIO
from tests.terminal import Terminal

CLI = [*ARREIO]


def _two_runs(work: Path, env: dict) -> list[str]:
    ids = []
    for n in ("one", "two"):
        (work / "s.yaml").write_text(
            f'- tool_calls: [{{name: write_file, arguments: {{path: "{n}.txt", content: "{n}"}}}}]\n- text: done\n'
        )
        ran = subprocess.run(
            [*CLI, "run", f"write {n}", "--script", "s.yaml", "--json"],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
            check=False,
        )
        assert ran.returncode == 0, ran.stderr
        ids.append(Path(json.loads(ran.stdout.splitlines()[-1])["report_path"]).parent.name)
    return ids


def _listed(work: Path, env: dict) -> list[str]:
    out = subprocess.run(
        [*CLI, "checkpoints", "list", "--json"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    ).stdout
    return [e["id"] for e in json.loads(out)]


def test_prune_refuses_m_and_asks_before_removing(tmp_path: Path, arreio_env: dict) -> None:
    first, second = _two_runs(tmp_path, arreio_env)

    def prune(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*CLI, "checkpoints", "prune", *args],
            cwd=tmp_path,
            env=arreio_env,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
            check=False,
        )

    ambiguous = prune("--older-than", "1m")
    assert ambiguous.returncode == 2 and "m could be minutes or months" in ambiguous.stderr
    unasked = prune("--older-than", "0s")  # nobody at a terminal to say yes
    assert unasked.returncode == 2 and "re-run with --yes" in unasked.stderr
    assert (
        f"1 run older than 0 seconds would lose their checkpoints (undo can no longer take them back): {first}"
        in unasked.stderr
    )
    assert _listed(tmp_path, arreio_env) == [first, second]

    term = Terminal([*CLI, "checkpoints", "prune", "--older-than", "0min"], cwd=tmp_path, env=arreio_env)
    term.expect(r"remove them\? \[y/N\]: ")
    term.type("n\r")
    assert term.wait() == 1 and "prune cancelled: nothing was removed" in term.plain
    assert _listed(tmp_path, arreio_env) == [first, second]

    done = prune("--older-than", "0s", "--yes")
    assert done.returncode == 0 and first in done.stdout
    assert _listed(tmp_path, arreio_env) == [second]
