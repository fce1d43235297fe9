"""Whether anything answers at a `--ray ADDRESS`, asked before Ray is.

`ray.init(address=…)` at an address where nothing listens retries for about ten minutes, printing a
C++ warning every five seconds and no word from arreio, and a Ctrl-C meanwhile was not heeded (a user
trial). A TCP connect says in milliseconds that nothing is there; what does answer is then Ray's to
judge. `auto` (find the local cluster) and an address without a port are left to Ray.
"""

from __future__ import annotations

import socket

from arreio.engine.core.errors import ConfigError

CONNECT_TIMEOUT_S = 5.0


def host_and_port(address: str) -> tuple[str, int] | None:
    """(host, port) of `host:port`, `ray://host:port` or `[v6]:port`; None when it names no port."""
    rest = address.strip().removeprefix("ray://")
    host, colon, port = rest.rpartition(":")
    if not colon or not port.isdigit() or not host:
        return None
    return host.strip("[]"), int(port)


def check_answers(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """ConfigError (exit 5) when nothing accepts a connection at `address` within `timeout_s`."""
    found = host_and_port(address)
    if found is None:
        return
    try:
        socket.create_connection(found, timeout=timeout_s).close()
    except OSError as error:
        why = "no answer" if isinstance(error, TimeoutError) else (error.strerror or str(error)).lower()
        raise ConfigError(
            f"--ray {address}: no Ray cluster answers there ({why}); start one with "
            f"`ray start --head`, or check the address"
        ) from None
