"""Choosing the threads of a query's embedding from what each count has cost (query_threads.py)."""

from __future__ import annotations

from arreio.memory.knowledge.query_threads import FIXED_BYTES, QueryThreads

QUERY = "how are refunds reconciled"  # 26 bytes


def per_byte(ms: float) -> float:
    return ms / 1000 / (len(QUERY) + FIXED_BYTES)


def test_busy_cores_mean_one_thread_and_teach_nothing() -> None:
    choice = QueryThreads()
    assert [choice.choose(idle) for idle in (1, 1, 0)] == [1, 1, 1]
    for _ in range(3):
        choice.record(1, 1, 0.050, QUERY)  # one-thread times on a busy machine
    assert choice.costs() == {}


def learnt(choice: QueryThreads, two_ms: float = 12, one_ms: float = 21) -> QueryThreads:
    """Each count tried until it has a cost: twice, since the first time is a warm-up."""
    for threads, ms in ((2, 400), (2, two_ms), (1, 30), (1, one_ms)):
        assert choice.choose(2) == threads
        choice.record(threads, 2, ms / 1000, QUERY)
    return choice


def test_the_first_time_of_each_count_is_a_warm_up() -> None:
    choice = QueryThreads()
    choice.record(2, 2, 0.106, QUERY)  # the model's first pages and threads
    assert choice.costs() == {}
    assert choice.choose(2) == 2  # so two threads are tried again
    choice.record(2, 2, 0.012, QUERY)
    assert choice.costs() == {2: per_byte(12)}


def test_each_count_is_tried_then_the_cheaper_is_kept() -> None:
    choice = learnt(QueryThreads(explore_every=1000))
    assert [choice.choose(2) for _ in range(20)] == [2] * 20
    assert choice.costs() == {2: per_byte(12), 1: per_byte(21)}


def test_a_slower_second_core_turns_the_choice_to_one_and_back() -> None:
    choice = learnt(QueryThreads(explore_every=1000))
    while choice.choose(2) == 2:  # the host takes the second core: two threads wait on it
        choice.record(2, 2, 0.045, QUERY)
    assert choice.costs()[2] > choice.costs()[1]
    assert choice.choose(2) == 1
    choice.record(1, 2, 0.021, QUERY)
    for _ in range(20):  # the core comes back; seen when two are tried again
        choice.record(2, 2, 0.011, QUERY)
    assert choice.choose(2) == 2


def test_every_nth_search_tries_the_other_count() -> None:
    choice = learnt(QueryThreads(explore_every=4))
    picks = [choice.choose(2) for _ in range(12)]  # calls 5 to 16
    assert [i for i, p in enumerate(picks, start=5) if p == 1] == [8, 12, 16]


def test_costs_are_per_byte_of_query() -> None:
    choice = QueryThreads()
    longer = QueryThreads()
    for _ in range(2):
        choice.record(2, 2, 0.010, "a")
        longer.record(2, 2, 0.010, "a" * 200)
    assert longer.costs()[2] < choice.costs()[2]
    assert choice.costs()[2] == 0.010 / (1 + FIXED_BYTES)


def test_two_threads_wait_for_a_quick_keyword_pass_on_two_cores() -> None:
    choice = learnt(QueryThreads(explore_every=1000))  # two threads are the cheaper
    assert choice.choose(2, keyword_beside=True) == 1  # no keyword pass seen yet: it may be FTS5's slow one
    choice.record_keyword(0.002)
    assert choice.choose(2, keyword_beside=True) == 2
    choice.record_keyword(0.060)  # the first search of a new index state
    assert choice.choose(2, keyword_beside=True) == 1
    assert choice.choose(3, keyword_beside=True) == 2  # a third idle core: the pass has its own
    assert choice.choose(2) == 2  # no keyword pass beside (a vector-only search)
