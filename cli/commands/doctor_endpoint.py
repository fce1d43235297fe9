"""`arreio doctor`'s look at the model's server, when the model's calls go to a base URL (config
`base_url`, `ARREIO_BASE_URL`, or the SDK's OPENAI_BASE_URL / ANTHROPIC_BASE_URL): does it answer,
which models does it serve (and the configured one among them), how large is its context window, and
does the model return `tool_calls` to a request offering one tool. Each is a line of the doctor's.

A window the server does not say is a warning (the run works with the table's guess), not a problem.
Only httpx and the standard library; every request has a timeout.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

ANSWER_TIMEOUT_S = 5.0
TOOL_TIMEOUT_S = 90.0  # a model on a CPU reads the probe's prompt first: tens of seconds
PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "The current time in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}

Check = Callable[..., dict[str, Any]]


def endpoint_checks(
    env: dict[str, str], settings: Any, check: Check, *, call_model: bool = True
) -> list[dict[str, Any]]:
    """The endpoint's lines (none when the model's calls go to its vendor's own endpoint)."""
    import httpx

    from arreio.engine.providers.endpoint import endpoint_of
    from arreio.engine.providers.registry import is_offline
    from arreio.engine.providers.server_window import api_root, served_name, server_window

    model = settings.model
    if is_offline(model) or "/" not in model or (url := endpoint_of(model, env, settings.base_url)) is None:
        return []
    root, name = api_root(url), served_name(model)
    key = (env.get("OPENAI_API_KEY") or "").strip()
    headers = {"authorization": f"Bearer {key}"} if key and model.startswith("openai/") else {}
    try:
        answer = httpx.get(f"{root}/v1/models", headers=headers, timeout=ANSWER_TIMEOUT_S)
    except httpx.HTTPError as exc:
        return [
            check(
                "endpoint",
                False,
                f"nothing answers at {url} ({type(exc).__name__}: {exc})"[:300],
                "start the server, or point base_url / OPENAI_BASE_URL at where it listens",
            )
        ]
    out = [check("endpoint", True, f"{url} answers (HTTP {answer.status_code} for /v1/models)")]
    served = _served(answer)
    if served is None:
        out.append(
            check("model", True, f"{name}: the server lists no models (/v1/models gave HTTP {answer.status_code})")
        )
    elif name in served or f"{name}:latest" in served or len(served) == 1:
        one = (
            f" (it serves one model, {served[0]}, whatever the name)" if len(served) == 1 and name not in served else ""
        )
        out.append(check("model", True, f"{name} is served{one}"))
    else:
        out.append(
            check(
                "model",
                False,
                f"the server does not serve {name}; it serves: {', '.join(served[:12])}",
                f"arreio config set model {model.split('/', 1)[0]}/{served[0]}",
            )
        )
    found = server_window(model, env, settings.base_url, refresh=True)
    if found is not None and found.window:
        out.append(check("window", True, f"{found.window:,} tokens ({found.source}); cached for the next runs"))
    elif found is not None:
        out.append(
            check(
                "window",
                None,
                f"not said by the server ({found.error}); runs use arreio's model table",
                "arreio config set context.window N (the server's context size)",
            )
        )
    if call_model:
        out.append(_tool_call(root, name, headers, check))
    return out


def _served(answer: Any) -> list[str] | None:
    try:
        data = answer.json() if answer.status_code == 200 else None
    except ValueError:
        return None
    rows = data.get("data") if isinstance(data, dict) else None
    return [str(r["id"]) for r in rows if isinstance(r, dict) and r.get("id")] if isinstance(rows, list) else None


def _tool_call(root: str, name: str, headers: dict[str, str], check: Check) -> dict[str, Any]:
    """One small request offering one tool, not streamed: does the reply carry `tool_calls`?"""
    import httpx

    body = {
        "model": name,
        "stream": False,
        "max_tokens": 128,
        "temperature": 0,
        "tools": [PROBE_TOOL],
        "messages": [{"role": "user", "content": "What time is it in Lisbon? Use the get_time tool."}],
    }
    try:
        reply = httpx.post(f"{root}/v1/chat/completions", json=body, headers=headers, timeout=TOOL_TIMEOUT_S)
    except httpx.HTTPError as exc:
        return check(
            "tool calls",
            False,
            f"the probe request failed ({type(exc).__name__}: {exc})"[:300],
            "check the server's log",
        )
    try:
        data = reply.json()
    except ValueError:
        data = None
    if reply.status_code != 200 or not isinstance(data, dict):
        said = json.dumps(data)[:200] if data is not None else reply.text[:200]
        return check(
            "tool calls",
            False,
            f"HTTP {reply.status_code} to a request with one tool: {said}",
            "start the server with tool calling on (llama-server --jinja; vLLM --enable-auto-tool-choice)",
        )
    choice = (data.get("choices") or [{}])[0] if isinstance(data.get("choices"), list) else {}
    message = choice.get("message") if isinstance(choice, dict) else None
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    if calls:
        return check("tool calls", True, f"{name} called the one tool offered (get_time)")
    text = " ".join(str((message or {}).get("content") or "").split())[:120]
    return check(
        "tool calls",
        False,
        f"{name} answered in text, not tool_calls: {text!r} (arreio then reads calls written as text, less reliably)",
        "a model and chat template with tool calling (llama-server --jinja; Ollama: a model tagged 'tools')",
    )
