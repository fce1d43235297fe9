"""Fixtures for the provider tests; the fakes themselves live in `provider_fakes.py`."""

from __future__ import annotations

from provider_fakes import server  # noqa: F401  (the local wire server fixture)
