"""A `retry-after` HTTP date counts from the response's own `Date`: the server's clock wrote both, so a
local clock that is off neither stretches nor cuts the wait (and no logic reads the wall clock)."""

from __future__ import annotations

from arreio.engine.providers.wire import parse_retry_after


def test_a_retry_date_counts_from_the_responses_date() -> None:
    headers = {"Retry-After": "Wed, 21 Oct 2015 07:28:30 GMT", "Date": "Wed, 21 Oct 2015 07:28:00 GMT"}
    assert parse_retry_after(headers) == 30.0


def test_a_retry_date_without_a_date_to_count_from_leaves_the_wait_to_the_backoff() -> None:
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:30 GMT"}) is None
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:30 GMT", "date": "soon"}) is None
