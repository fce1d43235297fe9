"""The context window against a real server (its own llama-server, started with `-c 2048` so that a
few small files fill it): the run compacts at 60% of the window — before the server would refuse an
overflowing request — whether the window is set in config or read from the server itself."""

from __future__ import annotations

import pytest

from tests.realmodel import prepare
from tests.realmodel.conftest import Project, env_for, start_own

pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(2400)]

SERVER_WINDOW = 2048
LINES = 30  # ~450 tokens a file: two or three reads pass 60% of 2048 with the system prompt and one tool


def big_file(n: int) -> str:
    return "".join(f"record {n}-{i:03d}: the quick brown fox jumps over the lazy dog\n" for i in range(LINES))


@pytest.mark.parametrize("window", ["config", "server"], ids=["window-from-config", "window-from-server"])
def test_compaction_at_60_percent_of_the_servers_window(project: Project, window: str) -> None:
    for n in (1, 2, 3):
        (project.root / f"part{n}.txt").write_text(big_file(n))
    # the summary is the model's own: on a busy CPU it takes minutes
    context = "  prune: false\n  summary_timeout_s: 1200\n"
    context += f"  window: {SERVER_WINDOW}\n" if window == "config" else ""
    project.config(f"context:\n{context}")
    server = start_own(ctx=SERVER_WINDOW)
    project.env = env_for(project.home, server)
    try:
        result = project.run(
            "Read part1.txt with read_file. Then read part2.txt. Then read part3.txt. "
            "Then answer with the number of files you read.",
            "--max-steps",
            "8",
            "--tools",
            "read_file",
            timeout=1500,
        )
    finally:
        prepare.stop_server(server.proc)
    compactions = [c for c in result.of("compaction") if c["kind"] == "summary"]
    assert compactions, result.story()
    first = compactions[0]
    # compacted past the watermark and before the server's own limit: no request overflowed
    assert 0.6 * SERVER_WINDOW <= first["tokens_before"] < SERVER_WINDOW, result.story()
    assert first["tokens_after"] < first["tokens_before"]
    # the server refused no request as too long (a compaction after a refusal looks the same in the events)
    refused = [
        ln for ln in server.log.read_text(errors="replace").splitlines() if "exceeds the available context" in ln
    ]
    assert not refused, "\n".join(refused) + "\n" + result.story()
    assert result.code == 0 or result.done["message"], result.story()
