"""The pure `transition(record, now, policy)`: every rule with a fixed clock, no disk involved."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from curator_fakes import T0

from arreio.curator.lifecycle import Policy, seed, transition
from arreio.curator.usage import UsageRecord

POLICY = Policy()


def days(n: float):
    return T0 + timedelta(days=n)


def agent(**changes) -> UsageRecord:
    return replace(UsageRecord(name="s", created_at=T0, created_by="agent"), **changes)


def test_defaults_are_thirty_and_ninety_days() -> None:
    assert (POLICY.stale_days, POLICY.archive_days) == (30, 90)


def test_idle_45_days_becomes_stale() -> None:
    decided = transition(agent(), days(45), POLICY)
    assert decided is not None
    assert (decided.kind, decided.from_state, decided.to_state) == ("stale", "active", "stale")
    assert "45 days" in decided.reason


def test_idle_120_days_is_archived_from_active_or_stale() -> None:
    for state in ("active", "stale"):
        decided = transition(agent(state=state), days(120), POLICY)
        assert decided is not None
        assert (decided.kind, decided.from_state, decided.to_state) == ("archive", state, "archived")


def test_pinned_is_untouched_even_after_a_year() -> None:
    assert transition(agent(pinned=True), days(365), POLICY) is None
    assert transition(agent(pinned=True, state="stale"), days(365), POLICY) is None


@pytest.mark.parametrize("created_by", ["user", "bundled"])
def test_only_agent_skills_are_touched(created_by: str) -> None:
    assert transition(agent(created_by=created_by), days(365), POLICY) is None


def test_stale_used_today_is_reactivated() -> None:
    record = agent(state="stale", last_used_at=days(200))
    decided = transition(record, days(200), POLICY)
    assert decided is not None
    assert (decided.kind, decided.from_state, decided.to_state) == ("reactivate", "stale", "active")


def test_stale_not_used_since_stays_stale() -> None:
    assert transition(agent(state="stale", last_used_at=days(10)), days(50), POLICY) is None


def test_never_used_young_skill_is_left_alone() -> None:
    assert transition(agent(), days(29), POLICY) is None
    assert transition(agent(), T0, POLICY) is None


def test_last_activity_is_the_newest_stamp() -> None:
    record = agent(last_used_at=days(1), last_viewed_at=days(100), last_patched_at=days(50))
    assert record.last_activity() == days(100)
    assert transition(record, days(129), POLICY) is None  # 29 days since the view
    assert transition(record, days(131), POLICY).kind == "stale"  # type: ignore[union-attr]


def test_views_and_patches_count_as_activity() -> None:
    assert transition(agent(last_viewed_at=days(40)), days(45), POLICY) is None
    assert transition(agent(last_patched_at=days(40)), days(45), POLICY) is None


def test_archived_records_are_terminal() -> None:
    assert transition(agent(state="archived", archived_at=days(100)), days(500), POLICY) is None


def test_policy_is_configurable_and_validated() -> None:
    policy = Policy.from_mapping({"stale_days": 7, "archive_days": 14})
    assert transition(agent(), days(8), policy).kind == "stale"  # type: ignore[union-attr]
    assert transition(agent(), days(15), policy).kind == "archive"  # type: ignore[union-attr]
    with pytest.raises(ValueError):
        Policy(stale_days=30, archive_days=10)
    with pytest.raises(ValueError):
        Policy(stale_days=0)


def test_clock_moving_backwards_never_archives() -> None:
    assert transition(agent(last_used_at=days(10)), days(5), POLICY) is None


def test_seed_only_creates_a_record() -> None:
    decided = seed("new-one")
    assert (decided.kind, decided.from_state, decided.to_state) == ("seed", None, "active")
