"""What every real-vendor adapter shares: its settings and a client built on first use (so the SDK
import — seconds — is paid only by a run that talks to that vendor)."""

from __future__ import annotations

from typing import Any


class VendorProvider:
    """Base for the Anthropic, OpenAI and litellm adapters. Subclasses build their client in
    `_make_client` (with the SDK's own retries off: the harness owns retries)."""

    name = "vendor"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None,
        base_url: str | None,
        session_id: str | None = None,
        client: Any = None,
        transport: Any = None,
    ) -> None:
        self.model = model
        self._api_key = api_key
        self._base_url = base_url
        self._session_id = session_id
        self._client = client
        # The httpx transport under the SDK's client (None: the real network). Tests replay wire
        # fixtures through the real SDK with an `httpx.MockTransport`, the SSE tap still in place.
        self._transport = transport

    def _transport_kw(self) -> dict[str, Any]:
        """The SDK client's `transport` argument, only when one was given: without it the SDK picks
        its own (with TCP keep-alive)."""
        return {} if self._transport is None else {"transport": self._transport}

    def _make_client(self) -> Any:  # pragma: no cover - each adapter overrides it
        raise NotImplementedError

    def _get_client(self) -> Any:
        if self._client is None:
            self._client = self._make_client()
        return self._client
