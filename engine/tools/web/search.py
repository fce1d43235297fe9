"""`web_search`: search the web through a pluggable backend (config `web.search.backend`).

A backend is anything with `async search(query, k) -> list[SearchHit]`. One ships: Brave Search's
web API (a common, keyed JSON API). With no backend configured — or its key missing — the tool's
prerequisite fails and the resolver does not offer it (the reason is kept for the report).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from arreio.engine.tools.base import Tool, ToolError, ToolResult
from arreio.engine.tools.run_context import RunContext
from arreio.engine.tools.web.config import SearchSettings

BRAVE_URL = "https://api.search.brave.com/res/v1/web/search"
_TAGS = re.compile(r"<[^>]+>")


class SearchHit(BaseModel):
    title: str
    url: str
    snippet: str = ""


class SearchBackend(Protocol):
    """What web_search needs from a search service."""

    name: str

    async def search(self, query: str, k: int) -> list[SearchHit]: ...


class BraveSearch:
    """Brave Search web API: GET ?q=&count=, key in `X-Subscription-Token`, hits in `web.results`."""

    name = "brave"

    def __init__(
        self, api_key: str, *, base_url: str | None = None, timeout_s: float = 15.0, transport: Any = None
    ) -> None:
        self.api_key = api_key
        self.base_url = base_url or BRAVE_URL
        self.timeout_s = timeout_s
        self.transport = transport

    async def search(self, query: str, k: int) -> list[SearchHit]:
        import httpx

        headers = {"Accept": "application/json", "X-Subscription-Token": self.api_key}
        try:
            async with httpx.AsyncClient(timeout=self.timeout_s, transport=self.transport) as client:
                response = await client.get(self.base_url, params={"q": query, "count": k}, headers=headers)
        except httpx.TimeoutException:
            raise ToolError(f"the search service did not answer within {self.timeout_s:g}s", transient=True) from None
        except httpx.HTTPError as exc:
            raise ToolError(
                f"could not reach the search service ({type(exc).__name__}: {exc})", transient=True
            ) from None
        status = response.status_code
        if status in (401, 403):
            raise ToolError(f"the search service refused the API key (HTTP {status}) — ask the user to check it")
        if status == 429:
            raise ToolError(
                "the search service's rate limit was reached (HTTP 429) — wait, then search again", transient=True
            )
        if status >= 400:
            raise ToolError(f"the search service failed (HTTP {status})", transient=status >= 500)
        try:
            results = ((response.json() or {}).get("web") or {}).get("results") or []
        except ValueError:
            raise ToolError("the search service answered with something that is not JSON", transient=True) from None
        hits = []
        for item in results[:k]:
            if isinstance(item, Mapping) and item.get("url"):
                hits.append(
                    SearchHit(
                        title=_clean(item.get("title", "")),
                        url=str(item["url"]),
                        snippet=_clean(item.get("description", "")),
                    )
                )
        return hits


def _clean(text: Any) -> str:
    return html.unescape(_TAGS.sub("", str(text or ""))).strip()


BACKENDS = {"brave": BraveSearch}


def make_backend(settings: SearchSettings | None, env: Mapping[str, str]) -> tuple[SearchBackend | None, str]:
    """The configured backend, or None and why not."""
    if settings is None:
        return None, "no search backend configured (set web.search.backend in config)"
    key = env.get(settings.api_key_env, "")
    if not key:
        return None, f"the {settings.backend} search backend needs ${settings.api_key_env}, which is not set"
    cls = BACKENDS[settings.backend]
    return cls(key, base_url=settings.base_url, timeout_s=settings.timeout_s), ""


class WebSearchInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, description="What to search for.")
    k: int | None = Field(None, ge=1, le=20, description="How many results (default from config).")


class WebSearch(Tool):
    name = "web_search"
    description = "Search the web; returns titles, URLs and snippets. Read a result in full with web_fetch."
    input_model = WebSearchInput
    repeat = "few"

    def __init__(self, backend: SearchBackend | None, *, why_not: str = "", default_k: int = 5) -> None:
        self.backend = backend
        self.why_not = why_not
        self.default_k = default_k

    def unavailable(self, ctx: Any) -> str | None:
        """The resolver's prerequisite: offered only with a working backend."""
        return None if self.backend is not None else (self.why_not or "no search backend configured")

    async def execute(self, args: WebSearchInput, ctx: RunContext) -> ToolResult:
        if self.backend is None:
            raise ToolError(self.why_not or "no search backend configured")
        hits = await self.backend.search(args.query, args.k or self.default_k)
        if not hits:
            return ToolResult(content=f"no results for {args.query!r} — try other words")
        lines = [
            f"{i}. {h.title or h.url}\n   {h.url}" + (f"\n   {h.snippet}" if h.snippet else "")
            for i, h in enumerate(hits, 1)
        ]
        return ToolResult(
            content=f"{len(hits)} result(s) for {args.query!r} ({self.backend.name}):\n" + "\n".join(lines)
        )
