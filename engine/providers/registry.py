"""Model string → provider (DESIGN.md section 5). The offline family is built here; the real vendors
are built by `routing.make_provider`, imported only when a run needs one (SDK imports are slow)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from arreio.engine.errors import UsageError
from arreio.engine.ports import Provider

OFFLINE = "offline"


def is_offline(model: str) -> bool:
    return model == OFFLINE or model.startswith(OFFLINE + "/")


def check_model(model: str) -> None:
    """Fail fast (before a session is created) on a model string nothing can serve."""
    if is_offline(model):
        return
    from arreio.engine.providers.routing import parse_model

    parse_model(model)


def make_provider(
    model: str,
    *,
    env: Mapping[str, str],
    base_url: str | None = None,
    session_id: str | None = None,
    script: Path | None = None,
    script_first_turn: int = 0,
) -> Provider:
    if script is not None:
        if not is_offline(model):
            raise UsageError(f"--script plays an offline script; it cannot be combined with --model {model}")
        from arreio.engine.providers.scripted import ScriptedProvider, load_script

        return ScriptedProvider.from_script(load_script(script), first_turn=script_first_turn)
    if is_offline(model):
        from arreio.engine.providers.offline import OfflineProvider

        return OfflineProvider()
    from arreio.engine.providers.routing import make_provider as make_vendor_provider

    return make_vendor_provider(model, env=env, base_url=base_url, session_id=session_id)
