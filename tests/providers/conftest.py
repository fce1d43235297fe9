"""Fixtures for the provider tests; the fakes themselves live in `provider_fakes.py`."""

from __future__ import annotations

import pytest
from provider_fakes import FakeServer


@pytest.fixture
def server():
    fake = FakeServer()
    fake.start()
    yield fake
    fake.stop()
