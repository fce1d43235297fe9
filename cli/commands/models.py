"""`arreio models`: the model strings arreio knows — provider, context window, prices, and whether the
key that provider needs is set (the variable's name only, never its value).

The rows come from the tables a run uses: the price table (`engine/providers/pricing.py`), the context
windows (`engine/context/window.py`) and the providers' key variables (`engine/providers/registry.py`).
Names match by prefix there, so `anthropic/claude-sonnet-4-5-20250929` reads the row of
`claude-sonnet-4-5`'s family. Any other `litellm/<vendor>/<model>` works too; it is just not listed.

Only typer and the standard library at import time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from arreio.engine.core.ports import process_env

HELP = (
    "List the known model strings with provider, context window, prices per million tokens and "
    "whether the provider's API key is set (names only, never values)."
)

# Table names served through litellm, by their vendor. The window table's bare families (deepseek,
# llama-3, qwen, mistral-large) are not model ids and are left out.
_LITELLM_VENDORS = {"gemini-": "gemini"}
_GENERIC = {"claude", "gemini", "offline", "scripted"}  # table fallbacks, not models


def model_rows(env: dict[str, str]) -> list[dict[str, Any]]:
    """One row per known model string, `offline` first."""
    from arreio.engine.context.window import WINDOWS, context_window
    from arreio.engine.providers.pricing import PRICES

    names = list(PRICES)
    names += [w for w in WINDOWS if w not in PRICES and w not in _GENERIC and not any(p.startswith(w) for p in PRICES)]
    rows = [
        {
            "model": "offline",
            "provider": "offline",
            "context_window": context_window("offline"),
            "price": {"input": 0.0, "output": 0.0, "cache_read": 0.0, "cache_write": 0.0},
            "key_var": None,
            "key_set": True,
        }
    ]
    for name in names:
        model, provider, var = _route(name)
        if model is None:
            continue
        rows.append(
            {
                "model": model,
                "provider": provider,
                "context_window": context_window(model),
                "price": _price(model),
                "key_var": var,
                "key_set": bool(var and (env.get(var) or "").strip()),
            }
        )
    return rows


def _route(name: str) -> tuple[str | None, str, str | None]:
    """(model string, provider, key variable) for a table name; None when no one vendor serves it."""
    from arreio.engine.core.errors import ConfigError
    from arreio.engine.providers.registry import KEY_VARS, LITELLM_KEY_VARS, parse_model

    try:
        provider, _ = parse_model(name)  # the bare-name rules a run applies: claude-* and gpt-*/o*
    except ConfigError:
        vendor = next((v for prefix, v in _LITELLM_VENDORS.items() if name.startswith(prefix)), None)
        if vendor is None:
            return None, "", None
        return f"litellm/{vendor}/{name}", "litellm", LITELLM_KEY_VARS.get(vendor)
    return f"{provider}/{name}", provider, KEY_VARS.get(provider)


def _price(model: str) -> dict[str, float | None] | None:
    from arreio.engine.providers.pricing import price_for

    price = price_for(model)
    if price is None:
        return None
    return {
        "input": price.input,
        "output": price.output,
        "cache_read": price.cache_read,
        "cache_write": price.cache_write if price.cache_write is not None else price.input,
    }


def endpoint_row(env: dict[str, str]) -> dict[str, Any] | None:
    """The server `openai/…` models are sent to when a base URL is in force (config `base_url`,
    ARREIO_BASE_URL, or OPENAI_BASE_URL): the models it serves and each one's context window, as the
    server says it (engine/providers/server_window.py, cached); None without one."""
    from arreio.engine.core.config import load_settings
    from arreio.engine.core.errors import ConfigError
    from arreio.engine.providers.endpoint import endpoint_of
    from arreio.engine.providers.server_window import ServedWindow, is_cloud, probe_window, server_window

    try:
        base_url = load_settings(Path.cwd(), env).base_url
    except ConfigError:
        base_url = None
    url = endpoint_of("openai/m", env, base_url)
    if url is None:
        return None
    source = "base_url" if base_url else "OPENAI_BASE_URL"
    if is_cloud(url):  # a known cloud: its windows are the table's, nothing to ask
        return {"url": url, "from": source, "error": None, "models": []}
    listing = probe_window(url, "", timeout_s=2.0, budget_s=0.0)  # the model list only: one request
    out: dict[str, Any] = {"url": url, "from": source, "error": None, "models": []}
    if listing.served is None:
        out["error"] = listing.error or "the server lists no models (/v1/models)"
        return out
    for name in listing.served[:MAX_SERVED]:
        found = server_window(f"openai/{name}", env, base_url) or ServedWindow(None)
        out["models"].append({"model": f"openai/{name}", "context_window": found.window, "source": found.source})
    return out


MAX_SERVED = 12  # a server with more models: the first ones are asked their window, the list says so


def key_vars(env: dict[str, str]) -> dict[str, bool]:
    """Every provider key variable arreio reads, and whether it is set (never its value)."""
    from arreio.engine.providers.registry import KEY_VARS, LITELLM_KEY_VARS

    names = dict.fromkeys([*KEY_VARS.values(), *LITELLM_KEY_VARS.values()])
    return {var: bool((env.get(var) or "").strip()) for var in names}


def models(json_output: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    env = process_env()
    rows = model_rows(env)
    endpoint = endpoint_row(env)
    if json_output:
        print(json.dumps({"models": rows, "keys": key_vars(env), "endpoint": endpoint}, indent=2))
        return
    from rich.table import Table

    from arreio.cli.render import console_for

    console = console_for()  # a pipe gets whole lines, not 80 columns
    if endpoint is not None:
        _print_endpoint(console, endpoint)
    columns = {
        "  model": max(len(row["model"]) for row in rows) + 2,
        "window": 6,
        "$/M in": 6,
        "out": 5,
        "cache read": 10,
        "write": 6,
    }  # fixed: the blocks line up under each other
    groups: dict[str | None, list[dict[str, Any]]] = {}
    for row in rows:  # one block per key: the heading says whether it is set
        groups.setdefault(row["key_var"], []).append(row)
    for var, members in groups.items():
        provider = members[0]["provider"]
        if var is None:
            heading = f"[bold]{provider}[/bold] — no key needed"
        else:
            state = "set" if members[0]["key_set"] else "[yellow]not set[/yellow]"
            heading = f"[bold]{provider}[/bold] — {var} {state}"
        console.print(heading)
        table = Table(box=None, pad_edge=False, header_style="dim", show_header=var is None)
        for column, width in columns.items():
            table.add_column(column, no_wrap=True, justify="left" if column == "  model" else "right", min_width=width)
        for row in members:
            price = row["price"] or {}
            table.add_row(
                f"  {row['model']}",
                _tokens(row["context_window"]),
                *(_money(price.get(k)) for k in ("input", "output", "cache_read", "cache_write")),
            )
        console.print(table)
    from arreio.engine.providers.pricing import PRICES_TAKEN

    console.print(
        f"Prices in US dollars per million tokens, from the vendors' price pages as of {PRICES_TAKEN} "
        "(other models: the price map litellm ships; `prices:` in config sets your own). Names match by "
        "prefix, dated ids too; any litellm/<vendor>/<model> works as well. A model served from a "
        "loopback or private-network address costs $0 (local).",
        style="dim",
    )


def _print_endpoint(console: Any, endpoint: dict[str, Any]) -> None:
    from rich.markup import escape

    console.print(
        f"[bold]openai[/bold] — {endpoint['from']}={escape(endpoint['url'])}: openai/<model> is sent there, "
        "not to OpenAI",
        soft_wrap=True,
    )
    if endpoint["error"]:
        console.print(f"  [yellow]{escape(endpoint['error'])}[/yellow]", soft_wrap=True)
    for row in endpoint["models"]:
        window = f"{row['context_window']:,} tokens ({row['source']})" if row["context_window"] else "window not said"
        console.print(f"  {escape(row['model'])}  {escape(window)}", soft_wrap=True)
    console.print()


def _tokens(count: int) -> str:
    return f"{count / 1_000_000:.1f}M" if count >= 1_000_000 else f"{count // 1000}k" if count >= 1000 else str(count)


def _money(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"
