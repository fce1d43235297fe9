"""`WebFeature`: `web_fetch` (unless `web.fetch: false`) and `web_search` (offered only with a backend)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from arreio.engine.loop.feature import Feature
from arreio.engine.tools.run_context import RunContext
from arreio.engine.tools.web.config import web_settings
from arreio.engine.tools.web.fetch import WebFetch
from arreio.engine.tools.web.search import WebSearch, make_backend

if TYPE_CHECKING:
    from arreio.engine.tools.base import Tool


class WebFeature(Feature):
    name = "web"

    def check(self, ctx: RunContext) -> None:
        ctx.section(web_settings)

    def tools(self, ctx: RunContext) -> list[Tool]:

        settings = ctx.section(web_settings)
        out: list[Tool] = [WebFetch(settings)] if settings.fetch else []
        backend, why_not = make_backend(settings.search, ctx.env)
        default_k = settings.search.max_results if settings.search else 5
        out.append(WebSearch(backend, why_not=why_not, default_k=default_k))
        return out
