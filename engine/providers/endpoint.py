"""Where a model's calls go: the base URL in force for a model string, and whether it is local.

A cloud model's name served by a local server (`--model openai/gpt-4o` with `OPENAI_BASE_URL` pointing
at llama-server) is not billed by anyone: a run against a loopback or private-network address costs
$0 (local), unless the user priced the model in config (`prices:`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from urllib.parse import urlsplit

# The environment variable each SDK reads its endpoint from when config names none.
_ENV = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}
_LOCAL_NAMES = ("localhost", "host.docker.internal")
_LOCAL_SUFFIXES = (".localhost", ".local", ".lan", ".home.arpa")


def endpoint_of(model: str, env: Mapping[str, str], base_url: str | None) -> str | None:
    """The base URL `model`'s calls go to: config's `base_url` (`ARREIO_BASE_URL` included), else the
    vendor SDK's variable; None: the vendor's own endpoint."""
    if base_url:
        return base_url
    vendor = model.split("/", 1)[0].lower() if "/" in model else ""
    name = _ENV.get(vendor)
    return (env.get(name) or None) if name else None


def is_local(url: str | None) -> bool:
    """A loopback, private-network or link-local address, or a local host name."""
    if not url:
        return False
    host = (urlsplit(url if "://" in url else f"http://{url}").hostname or "").lower().rstrip(".")
    if not host:
        return False
    if host in _LOCAL_NAMES or host.endswith(_LOCAL_SUFFIXES):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local
