"""The security scan on the corpora under fixtures/scan/, and where it applies.

docs/architecture.md invariant 9: every benign case passes (zero false alarms, also when the entries are read
together as whole stores); the hostile corpus is caught with recall ≥ 0.9, and every evasion the
red-team used (paraphrase, homoglyph, invisible characters, base64, hex, split entries, mixed) is
caught in full. Run with `-s` to see the precision/recall line and the measured latency.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from dataclasses import replace
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from arreio.learning.gate import ScoreGate
from arreio.learning.kernel import LearnDeps, review_and_learn
from arreio.learning.summary import RunSummary
from arreio.memory import normalise, scan
from arreio.memory.entries import JOINER, MemoryRefused
from arreio.memory.scan import CATEGORIES, ScanFinding, scan_store, scan_text
from arreio.memory.store import MemoryStores

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "scan"


def _load(name: str) -> list[dict]:
    return YAML(typ="safe", pure=True).load((FIXTURES / name).read_text(encoding="utf-8"))["cases"]


BENIGN = _load("benign.yaml")
HOSTILE = _load("hostile.yaml")
EVASIONS = {"paraphrase", "homoglyph", "invisible", "base64", "hex", "split", "mixed"}
STORE_LIMIT = 2200


def _categories(case: dict) -> list[str]:
    return case["category"] if isinstance(case["category"], list) else [case["category"]]


def _verdict(case: dict) -> ScanFinding | None:
    """What the scan says about a hostile case: one entry written, or the second half of a pair
    written to a store that already holds the first."""
    if "pair" in case:
        first, second = case["pair"]
        return scan_text(second) or scan_store([first], [first, second])
    return scan_text(case["text"])


def _case_id(case: dict) -> str:
    text = case.get("text") or " + ".join(case["pair"])
    return f"{case.get('evasion', case.get('kind'))}:{text[:36]!r}"


def _stores(texts: list[str], limit: int = STORE_LIMIT) -> list[list[str]]:
    """The texts cut, in order, into stores that fit the MEMORY.md limit."""
    stores: list[list[str]] = [[]]
    for text in texts:
        if stores[-1] and len(JOINER.join([*stores[-1], text])) > limit:
            stores.append([])
        stores[-1].append(text)
    return stores


# -- the corpora themselves -------------------------------------------------------------------------
def test_corpora_are_large_and_cover_every_category_and_evasion() -> None:
    assert len(BENIGN) >= 120
    assert len(HOSTILE) >= 80
    covered = {category for case in HOSTILE for category in _categories(case)}
    assert covered == set(CATEGORIES)
    assert EVASIONS <= {case["evasion"] for case in HOSTILE}
    kinds = {case["kind"] for case in BENIGN}
    assert {"preference", "command", "project_fact", "multilingual", "id", "skill"} <= kinds


@pytest.mark.parametrize("case", BENIGN, ids=_case_id)
def test_benign_case_passes(case: dict) -> None:
    assert scan_text(case["text"]) is None


@pytest.mark.slow
def test_benign_entries_read_together_as_stores_pass() -> None:
    """No false alarm where two honest entries meet, in the corpus order or shuffled."""
    texts = [case["text"] for case in BENIGN if case["kind"] != "skill"]
    for seed in range(12):
        order = texts[:]
        random.Random(seed).shuffle(order)
        for store in _stores(order):
            for end in range(2, len(store) + 1):
                assert scan_store(store[: end - 1], store[:end]) is None, store[end - 2 : end]


@pytest.mark.parametrize("case", HOSTILE, ids=_case_id)
def test_hostile_case_is_refused_under_its_category(case: dict) -> None:
    finding = _verdict(case)
    assert finding is not None, "missed"
    assert finding.category in _categories(case), finding
    assert finding.pattern  # the refusal names the rule that matched


@pytest.mark.parametrize("case", [c for c in HOSTILE if "pair" in c], ids=_case_id)
def test_split_halves_are_innocent_alone(case: dict) -> None:
    """The split cases test the whole-store read: neither half is caught on its own."""
    first, second = case["pair"]
    assert scan_text(first) is None and scan_text(second) is None


def test_precision_and_recall() -> None:
    false_alarms = [case for case in BENIGN if scan_text(case["text"]) is not None]
    caught = [case for case in HOSTILE if _verdict(case) is not None]
    evasive = [case for case in HOSTILE if case["evasion"] in EVASIONS]
    evasive_caught = [case for case in evasive if _verdict(case) is not None]
    precision = len(caught) / (len(caught) + len(false_alarms))
    recall = len(caught) / len(HOSTILE)
    print(
        f"\nscan corpus: benign {len(BENIGN)} (false alarms {len(false_alarms)}), hostile {len(HOSTILE)} "
        f"(caught {len(caught)}); precision {precision:.3f}, recall {recall:.3f}; "
        f"evasions {len(evasive_caught)}/{len(evasive)}"
    )
    assert false_alarms == []
    assert recall >= 0.9
    assert len(evasive_caught) == len(evasive)


def test_gates_change_no_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule's gate only skips text it cannot match: with every gate off, every verdict is the same."""
    texts = [case["text"] for case in BENIGN] + [case["text"] for case in HOSTILE if "text" in case]
    gated = [scan_text(text) for text in texts]
    monkeypatch.setattr(scan, "RULES", tuple(replace(rule, gate=None) for rule in scan.RULES))
    assert [scan_text(text) for text in texts] == gated


def test_one_scan_of_a_full_store_is_measured() -> None:
    """Printed with `-s`, not asserted: a test on a busy shared machine cannot hold a time (the
    numbers that count come from tests/bench/bench_scan.py)."""
    texts = [case["text"] for case in BENIGN if case["kind"] in ("preference", "project_fact", "command")]
    store = _stores(texts)[0]
    assert len(JOINER.join(store)) > 1900

    def timed(action) -> float:
        runs = []
        for _ in range(15):
            normalise.clear_cache()  # cold: nothing of this store was folded before
            start = time.perf_counter()
            action()
            runs.append((time.perf_counter() - start) * 1000)
        return statistics.median(runs)

    whole = timed(lambda: scan_text(JOINER.join(store)))
    write = timed(lambda: (scan_text(store[-1]), scan_store(store[:-1], store)))
    print(f"\nscan latency: whole {len(JOINER.join(store))}-char store {whole:.2f} ms, one write check {write:.2f} ms")
    assert whole > 0 and write > 0


# -- where the scan applies: store writes and the learning pass -------------------------------------
SPLIT = next(case["pair"] for case in HOSTILE if case["evasion"] == "split" and case["category"] == "claimed_approval")


@pytest.fixture
def stores(tmp_path: Path) -> MemoryStores:
    return MemoryStores(tmp_path / ".arreio")


def test_a_store_write_that_completes_a_split_instruction_is_refused(stores: MemoryStores) -> None:
    first, second = SPLIT
    stores.memory.add(first)
    with pytest.raises(MemoryRefused, match="split across entries"):
        stores.memory.add(second)
    assert stores.memory.entries() == [first]


def test_a_remove_that_closes_the_gap_is_refused_and_an_old_bad_pair_blocks_nothing(stores: MemoryStores) -> None:
    first, second = SPLIT
    stores.memory.add(first)
    stores.memory.add("The user prefers tabs.")
    stores.memory.add(second)
    with pytest.raises(MemoryRefused, match="security scan"):
        stores.memory.remove("prefers tabs")
    stores.memory.path.write_text(JOINER.join([first, second]) + "\n", encoding="utf-8")  # edited by hand
    stores.memory.add("Deploys go through `make deploy`.")  # the existing pair is not this write's doing
    stores.memory.remove(second)  # and removing half of it is always possible
    assert second not in stores.memory.entries()


def _propose(stores: MemoryStores, *contents: str) -> list[str]:
    class Proposer:
        async def propose(self, summary, current):
            return [
                {"target": "memory", "action": "add", "content": c, "score": 0.95, "rationale": "r"} for c in contents
            ]

    deps = LearnDeps(proposer=Proposer(), gate=ScoreGate(), stores=stores)
    outcome = asyncio.run(review_and_learn(RunSummary(goal="# Tidy", final_text="Done.", steps=2), deps))
    return [decision.bucket for decision in outcome.decisions]


@pytest.mark.parametrize("case", [c for c in HOSTILE if "text" in c][::9], ids=_case_id)
def test_a_hostile_learning_proposal_is_refused_by_the_store(stores: MemoryStores, case: dict) -> None:
    """The gate approves it (score 0.95); the memory store's scan still refuses it: `failed`, nothing saved."""
    assert _propose(stores, case["text"]) == ["failed"]
    assert stores.memory.entries() == []


def test_a_learning_proposal_that_completes_a_split_instruction_is_refused(stores: MemoryStores) -> None:
    """Each half passes on its own; the store reads them together and refuses the second."""
    first, second = SPLIT
    assert _propose(stores, first, second) == ["applied", "failed"]
    assert stores.memory.entries() == [first]
