"""The `web:` section of `.arreio/config.yaml`, validated here (the engine's Settings keeps it open).

```yaml
web:
  fetch: true                 # offer web_fetch (default)
  allow_private: false        # refuse every address that is not globally routable (default)
  timeout_s: 20
  max_chars: 20000            # text shown per call; the model pages on with `start`
  search:                     # no section → no web_search tool
    backend: brave
    api_key_env: BRAVE_API_KEY
```
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from arreio.engine.core.config import parse_section


class SearchSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: Literal["brave"] = Field(description="Which search API answers web_search.")
    api_key_env: str = Field("BRAVE_API_KEY", description="Environment variable holding the API key.")
    base_url: str | None = Field(None, pattern=r"^https?://", description="Endpoint override (a proxy, tests).")
    max_results: int = Field(5, ge=1, le=20, description="Results when the model does not say.")
    timeout_s: float = Field(15.0, gt=0, le=120, description="Longest one search may take.")


class WebSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    fetch: bool = Field(True, description="Offer the web_fetch tool.")
    allow_private: bool = Field(
        False, description="Allow addresses that are not globally routable (loopback, private, …)."
    )
    timeout_s: float = Field(20.0, gt=0, le=300, description="Longest one fetch may take, redirects included.")
    max_redirects: int = Field(5, ge=0, le=20, description="Redirects followed, each checked like the first address.")
    max_bytes: int = Field(5_000_000, ge=10_000, description="Download cap; a larger body is cut.")
    max_chars: int = Field(20_000, ge=500, le=200_000, description="Text shown per call unless the model asks.")
    user_agent: str = Field(
        "arreio/0.1 (terminal agent; +https://pypi.org/project/arreio/)", description="Sent with every fetch."
    )
    search: SearchSettings | None = Field(None, description="web_search is offered only when this is set.")


def parse_web(raw: Mapping[str, Any] | None) -> WebSettings:
    """Validate the section; a mistake is one ConfigError naming the field (`web.search.backend`)."""
    return parse_section(WebSettings, raw, "web")


def web_settings(settings: Any) -> WebSettings:
    """The run's `web:` section (`RunContext.section(web_settings)` parses it once per run)."""
    return parse_web(settings.web)
