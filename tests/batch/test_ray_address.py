"""`--ray ADDRESS` where nothing answers fails in a second with one line and exit 5; Ray itself retried
for about ten minutes, printing a C++ warning every five seconds. Real sockets on
loopback; the whole command as a real process when Ray is installed."""

from __future__ import annotations

import importlib.util
import socket
from pathlib import Path

import pytest

from arreio.engine.batch.ray_address import check_answers, host_and_port
from arreio.engine.core.errors import ConfigError
from tests.conftest import run_cli


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("127.0.0.1:6379", ("127.0.0.1", 6379)),
        ("ray://head.example:10001", ("head.example", 10001)),
        ("[::1]:6379", ("::1", 6379)),
        ("auto", None),
        ("head-node", None),
        ("host:port", None),
        (":6379", None),
    ],
)
def test_the_host_and_port_an_address_names(address: str, expected: tuple | None) -> None:
    assert host_and_port(address) == expected


def test_a_listening_address_passes_and_a_closed_one_is_named() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        check_answers(f"127.0.0.1:{server.getsockname()[1]}")  # something answers: Ray's to judge
    port = closed_port()
    with pytest.raises(ConfigError, match=rf"--ray 127.0.0.1:{port}: no Ray cluster answers there"):
        check_answers(f"127.0.0.1:{port}")  # arreio's own check said it: Ray's minute of retries never began
    check_answers("auto")  # left to Ray


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="the ray extra is not installed")
def test_batch_at_a_dead_address_exits_5_at_once(tmp_path: Path, arreio_env: dict[str, str]) -> None:
    (tmp_path / "s.yaml").write_text('version: 1\ndefaults: {model: offline}\ntasks:\n  - {id: s, goal: "say hi"}\n')
    port = closed_port()
    done = run_cli(tmp_path, arreio_env, "batch", "s.yaml", "--ray", f"127.0.0.1:{port}", timeout=90)
    assert done.returncode == 5, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(f"arreio: error: --ray 127.0.0.1:{port}: no Ray cluster")
