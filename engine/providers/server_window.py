"""How many tokens a model server's context holds, asked from the server itself (docs/architecture.md section 5).

The window table guesses from a model's name (`qwen…` → 131,072); a local server says what it was
started with (`llama-server -c 8192`), and only that number lets compaction at the watermark come
before the server refuses the request. `server_window(model, env, base_url)` is the one entry point:
it decides whether there is a server to ask, answers from the cache, or probes and caches.

Where each server says it (asked in this order, the first number wins):
- vLLM: GET /v1/models → data[].max_model_len;
- llama-server: GET /props → default_generation_settings.n_ctx (per slot: what one request may use),
  else GET /v1/models → data[].meta.n_ctx (builds that report it there);
- LM Studio: GET /api/v0/models → data[].loaded_context_length, else max_context_length;
- Ollama: GET /api/ps → models[].context_length (a loaded model: what it runs with), else
  POST /api/show → `num_ctx` in parameters, else model_info's `<arch>.context_length`;
- any server's refusal of a too-long request (`window_of_refusal`): llama-server's `n_ctx`, "maximum
  context length is N tokens" (OpenAI's wording: vLLM, llama-cpp-python), LM Studio's "context
  length of only N tokens" — learnt with `learn_window`.

Bounded: each request 1.5 s, the whole probe 4 s, and a server where nothing listens stops it at the
first request. Never run for a vendor's own endpoint or a known cloud host. Cached on disk per API
root + model (`~/.cache/arreio/windows.json`): a found window for a day, a server that said nothing
for ten minutes — not a per-run cost.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from arreio.engine.core.atomic import write_atomic
from arreio.engine.core.paths import user_cache_dir
from arreio.engine.providers.endpoint import endpoint_of

CACHE_FILE = "windows.json"
FOUND_TTL_S = 86_400.0
MISSED_TTL_S = 600.0
REQUEST_TIMEOUT_S = 1.5
PROBE_BUDGET_S = 4.0
CACHE_MAX_BYTES = 1_000_000
# Hosts whose models' windows the table knows; asking them would only cost the run a round trip.
CLOUD_HOSTS = (
    "openai.com",
    "anthropic.com",
    "openrouter.ai",
    "groq.com",
    "deepseek.com",
    "mistral.ai",
    "together.xyz",
    "together.ai",
    "fireworks.ai",
    "googleapis.com",
    "x.ai",
    "cerebras.ai",
    "azure.com",
    "cohere.ai",
    "cohere.com",
    "perplexity.ai",
    "amazonaws.com",
    "deepinfra.com",
)
ASKED = "/v1/models, /props, /api/v0/models, /api/ps"


@dataclass
class ServedWindow:
    """What a server said of a model: `window` (None: it did not say), where the number came from, the
    model ids it serves (None: no list came), why nothing was found, and whether it was asked now (False:
    the answer came from the cache)."""

    window: int | None
    source: str = ""
    served: list[str] | None = None
    error: str | None = None
    probed: bool = False


def api_root(base_url: str) -> str:
    """The server's root: the base URL without a trailing `/v1` (llama-server's /props, Ollama's /api/…
    live beside the OpenAI API, not under it)."""
    root = base_url.strip().rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def served_name(model: str) -> str:
    """The name the server knows a model string by: `openai/qwen2.5:7b` → `qwen2.5:7b`,
    `litellm/ollama/qwen2.5` → `qwen2.5`."""
    head, _, rest = model.partition("/")
    if head == "litellm" and "/" in rest:
        return rest.split("/", 1)[1]
    return rest if head in ("openai", "anthropic", "litellm") and rest else model


def is_cloud(url: str) -> bool:
    host = (urlsplit(url if "://" in url else f"http://{url}").hostname or "").lower().rstrip(".")
    return any(host == h or host.endswith("." + h) for h in CLOUD_HOSTS)


def endpoint_to_ask(model: str, env: Mapping[str, str], base_url: str | None) -> str | None:
    """The base URL whose server is asked for `model`'s window, or None: the vendor's own endpoint (no
    base URL in force), a known cloud host, a model no server serves (offline, scripted), or a Claude
    model (an Anthropic-compatible endpoint is a proxy to Claude, whose windows the table knows)."""
    if not model.startswith(("openai/", "litellm/")):
        return None
    url = endpoint_of(model, env, base_url)
    return url if url and not is_cloud(url) else None


# -- the probe ---------------------------------------------------------------------------------


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _entry_for(entries: list[dict[str, Any]], name: str, *keys: str) -> dict[str, Any] | None:
    """The list entry naming `name` (a `:latest` tag aside), or the only entry (llama-server serves
    one model whatever the request names)."""

    def plain(value: Any) -> str:
        return str(value or "").removesuffix(":latest")

    for entry in entries:
        if any(plain(entry.get(k)) == plain(name) for k in keys):
            return entry
    return entries[0] if len(entries) == 1 else None


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []


class _Asker:
    """GETs (and Ollama's one POST) against the server root, under one deadline."""

    def __init__(self, client: Any, root: str, deadline: float, clock: Callable[[], float]) -> None:
        self.client, self.root, self.deadline, self.clock = client, root, deadline, clock

    def __call__(self, path: str, body: dict[str, Any] | None = None) -> dict[str, Any] | None:
        import httpx

        if self.clock() > self.deadline:
            return None
        try:
            if body is None:
                response = self.client.get(self.root + path)
            else:
                response = self.client.post(self.root + path, json=body)
        except (httpx.TimeoutException, httpx.NetworkError, httpx.ProtocolError):
            return None
        if response.status_code != 200:
            return None
        try:
            data = response.json()
        except ValueError:
            return None
        return data if isinstance(data, dict) else None


def probe_window(
    base_url: str,
    name: str,
    *,
    api_key: str | None = None,
    timeout_s: float = REQUEST_TIMEOUT_S,
    budget_s: float = PROBE_BUDGET_S,
    clock: Callable[[], float] = time.monotonic,
) -> ServedWindow:
    """Ask the server at `base_url` how many tokens model `name` may hold (see the module docstring).
    Never raises: a server that cannot be reached or says nothing gives a window of None and why."""
    import httpx

    root = api_root(base_url)
    headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
    with httpx.Client(timeout=timeout_s, headers=headers) as client:
        try:  # the first request tells whether anything listens at all
            first = client.get(root + "/v1/models")
        except httpx.TimeoutException:
            return ServedWindow(None, error=f"{root} gave no answer in {timeout_s:g} s", probed=True)
        except httpx.HTTPError as exc:
            return ServedWindow(
                None, error=f"nothing answers at {root} ({type(exc).__name__}: {exc})"[:300], probed=True
            )
        ask = _Asker(client, root, clock() + budget_s, clock)
        try:
            models = first.json() if first.status_code == 200 else None
        except ValueError:
            models = None
        entries = _dicts(models.get("data")) if isinstance(models, dict) else []
        served = [str(e["id"]) for e in entries if e.get("id")] if isinstance(models, dict) else None

        def said(window: int | None, source: str) -> ServedWindow | None:
            return ServedWindow(window, source, served, probed=True) if window else None

        entry = _entry_for(entries, name, "id") or {}
        meta = entry.get("meta") if isinstance(entry.get("meta"), dict) else {}
        found = said(_positive(entry.get("max_model_len")), "max_model_len in /v1/models (vLLM)")
        if found is None and (props := ask("/props")) is not None:
            settings = props.get("default_generation_settings")
            found = said(
                _positive(settings.get("n_ctx")) if isinstance(settings, dict) else None,
                "n_ctx in /props (llama-server)",
            )
        found = found or said(_positive(meta.get("n_ctx")), "meta.n_ctx in /v1/models (llama-server)")
        if found is None and (lm := ask("/api/v0/models")) is not None:
            row = _entry_for(_dicts(lm.get("data")), name, "id") or {}
            found = said(
                _positive(row.get("loaded_context_length")) or _positive(row.get("max_context_length")),
                "context length in /api/v0/models (LM Studio)",
            )
        if found is None and (ps := ask("/api/ps")) is not None and "models" in ps:
            row = _entry_for(_dicts(ps.get("models")), name, "name", "model") if ps.get("models") else None
            found = said(_positive((row or {}).get("context_length")), "context_length in /api/ps (Ollama)")
            if found is None and (show := ask("/api/show", {"model": name})) is not None:
                found = said(_ollama_show(show), "/api/show (Ollama)")
        return found or ServedWindow(
            None, served=served, probed=True, error=f"the server did not say its context window (asked {ASKED})"
        )


def _ollama_show(show: dict[str, Any]) -> int | None:
    """`num_ctx` a Modelfile sets, else the model's own `<arch>.context_length`."""
    parameters = show.get("parameters")
    if isinstance(parameters, str) and (m := re.search(r"(?m)^\s*num_ctx\s+(\d+)", parameters)):
        return int(m.group(1)) or None
    info = show.get("model_info")
    if isinstance(info, dict):
        return next(
            (_positive(v) for k, v in info.items() if str(k).endswith(".context_length") and _positive(v)), None
        )
    return None


# -- what a refusal says -----------------------------------------------------------------------

_REFUSAL_WINDOW = (
    re.compile(r'"?n_ctx"?\s*[:=]\s*(\d+)'),  # llama-server's error body
    re.compile(r"available context size \((\d+) tokens\)"),  # llama-server's message
    re.compile(r"maximum context length is (\d+) tokens"),  # OpenAI's wording: vLLM, llama-cpp-python, DeepSeek
    re.compile(r"context length of only (\d+) tokens"),  # LM Studio
)


def window_of_refusal(text: str) -> int | None:
    """The window a server's refusal of a too-long request names, or None."""
    for pattern in _REFUSAL_WINDOW:
        if (m := pattern.search(text or "")) and int(m.group(1)) > 0:
            return int(m.group(1))
    return None


# -- the cache ---------------------------------------------------------------------------------


class WindowCache:
    """`windows.json` in the user's cache folder: {"version": 1, "entries": {"<root>|<model>": {...}}}.
    An unreadable file is an empty cache (it is made again), never an error."""

    def __init__(self, path: Path, now: Callable[[], float] = time.time) -> None:
        self.path, self.now = path, now

    def _entries(self) -> dict[str, Any]:
        try:
            if self.path.stat().st_size > CACHE_MAX_BYTES:
                return {}
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return {}
        entries = data.get("entries") if isinstance(data, dict) else None
        return entries if isinstance(entries, dict) else {}

    def get(self, root: str, name: str) -> ServedWindow | None:
        entry = self._entries().get(f"{root}|{name}")
        if not isinstance(entry, dict) or not isinstance(entry.get("at"), (int, float)):
            return None
        window = _positive(entry.get("window"))
        if self.now() - entry["at"] > (FOUND_TTL_S if window else MISSED_TTL_S):
            return None
        served = entry.get("served")
        return ServedWindow(
            window,
            str(entry.get("source") or ""),
            served if isinstance(served, list) else None,
            entry.get("error") if isinstance(entry.get("error"), str) else None,
        )

    def put(self, root: str, name: str, found: ServedWindow) -> None:
        entries = self._entries()
        entries[f"{root}|{name}"] = {
            "window": found.window,
            "source": found.source,
            "served": found.served,
            "error": found.error,
            "at": self.now(),
        }
        try:
            write_atomic(self.path, json.dumps({"version": 1, "entries": entries}, indent=1), durable=False)
        except OSError:  # a cache that cannot be written only costs the next run a probe
            pass


def window_cache(env: Mapping[str, str]) -> WindowCache:
    return WindowCache(user_cache_dir(env) / CACHE_FILE)


def server_window(
    model: str,
    env: Mapping[str, str],
    base_url: str | None,
    *,
    timeout_s: float = REQUEST_TIMEOUT_S,
    refresh: bool = False,
) -> ServedWindow | None:
    """The window the server behind `model`'s endpoint says it has: from the cache, else probed (and
    cached). None when there is no server to ask (see `endpoint_to_ask`). `refresh` asks anew."""
    url = endpoint_to_ask(model, env, base_url)
    if url is None:
        return None
    root, name, cache = api_root(url), served_name(model), window_cache(env)
    if not refresh and (cached := cache.get(root, name)) is not None:
        return cached
    key = (env.get("OPENAI_API_KEY") or "").strip() or None if model.startswith("openai/") else None
    found = probe_window(url, name, api_key=key, timeout_s=timeout_s)
    cache.put(root, name, found)
    return found


def learn_window(model: str, env: Mapping[str, str], base_url: str | None, window: int, source: str) -> None:
    """Keep the window a server named in a refusal, so the next run starts from it."""
    url = endpoint_to_ask(model, env, base_url)
    if url is not None and window > 0:
        window_cache(env).put(api_root(url), served_name(model), ServedWindow(window, source))
