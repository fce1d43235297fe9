"""`arreio doctor`'s tools line: the tools a fresh run in this folder offers the model, and what their
descriptions and schemas cost in tokens on every model call (a local model on a CPU reads them before
its first token), counted per tool with a real tokenizer where one is installed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

BUDGET = 1_200  # tokens all default tools' schemas may cost together


def offered_specs(cwd: Path, env: dict[str, str], settings: Any) -> list[Any]:
    """The specs a fresh run here would send (MCP servers aside: they are not started for this; the
    result-set tools are withheld until a session has a set)."""
    from arreio.cli.deps import pipeline_deps
    from arreio.engine.context.feature import RESULT_TOOLS
    from arreio.engine.features.resolver import resolve_tools
    from arreio.engine.tools.run_context import RunContext

    deps = pipeline_deps()
    ctx = RunContext(cwd=cwd, settings=settings, env=env)
    features = [f.start(ctx) for f in deps.features if f.name != "mcp"]
    specs = resolve_tools(ctx, features, enable=settings.tools_enabled, disable=settings.tools_disabled).specs()
    return [s for s in specs if s.name not in RESULT_TOOLS]


def tools_check(cwd: Path, env: dict[str, str], settings: Any, check: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    from arreio.engine.core.errors import ArreioError
    from arreio.engine.features.resolver import spec_tokens

    try:
        specs = offered_specs(cwd, env, settings)
    except ArreioError as error:
        return check("tools", False, error.message, "arreio config edit (tools_enabled / tools_disabled)")
    tokenizer, counts = spec_tokens(specs)
    total = sum(counts.values())
    each = ", ".join(f"{name} {n}" for name, n in counts.items())
    detail = f"{len(counts)} offered, {total:,} tokens of descriptions and schemas per model call ({tokenizer}): {each}"
    # Over the budget is a warning only where it costs: a model on a local server reads the schemas on a
    # CPU before its first token. For a hosted model (or the offline one) the tokens are cents, and a
    # warning on a machine that is ready (a knowledge base adds `kb_search`) read as something to fix.
    if total <= BUDGET or not _local_model(settings, env):
        return check("tools", True, detail)
    return check("tools", None, detail, "fewer tools for a small local model: arreio config set tools_disabled '[…]'")


def _local_model(settings: Any, env: dict[str, str]) -> bool:
    from arreio.engine.providers.endpoint import endpoint_of, is_local

    model = str(settings.model or "")
    return model.startswith("litellm/ollama") or is_local(endpoint_of(model, env, settings.base_url))
