"""The promise gate never fails an honest answer, and still catches false claims.

The corpus in `fixtures/promises/`: `honest.yaml` (true final answers, each in the world it is true
in: they must all pass — invariant 9 in docs/architecture.md, a false alarm costs more than a miss) and `false.yaml`
(answers claiming files or passing commands that are not so: each must be caught with the subject
it lists, except the few marked `miss:`, which the closed registry knowingly lets through);
`acts-honest.yaml` and `acts-false.yaml` do the same for the agent's tool use (a tool used, a file
read, a folder listed, a search, a run), and `acts-held-out.yaml` holds both kinds, written before
that reading was built and reported apart. Each world is built for real: files in a temp folder
(before the run, changed or written during it) and the session's messages (`shell` calls with
their exit codes, `write_file` calls, other tool calls, a compaction, the user's message).
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from arreio.engine.core.messages import Message, TextPart, ToolCallPart, ToolResultPart
from arreio.engine.core.summary import SUMMARY_MARKER
from arreio.engine.judgement.gate_spec import GateSpec
from arreio.engine.judgement.gates import GateInputs, evaluate_gate
from arreio.engine.judgement.promises import Claim, check_promises

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "promises"
_yaml = YAML(typ="safe")


def _load(name: str) -> list[dict]:
    return _yaml.load((CORPUS / name).read_text(encoding="utf-8"))


FILES_HONEST, FILES_FALSE = _load("honest.yaml"), _load("false.yaml")
ACTS_HONEST, ACTS_FALSE = _load("acts-honest.yaml"), _load("acts-false.yaml")
HELD_OUT = _load("acts-held-out.yaml")
HONEST = FILES_HONEST + ACTS_HONEST + [c for c in HELD_OUT if "expect" not in c]
FALSE = FILES_FALSE + ACTS_FALSE + [c for c in HELD_OUT if "expect" in c]
CAUGHT = [c for c in FALSE if "miss" not in c]
MISSED = [c for c in FALSE if "miss" in c]
_KEYS = {
    "id",
    "answer",
    "before",
    "changed",
    "written",
    "tools",
    "empty",
    "shell",
    "compacted",
    "calls",
    "expect",
    "miss",
    "used",
    "goal",
}  # a `shell` run may say `refused: <the harness's words>`: it never ran
_HOUR = 3600.0


_CATEGORIES = ("files", "tool", "read", "list", "search", "run")


def _ids(cases: list[dict]) -> list[str]:
    return [("held-out/" if case in HELD_OUT else "") + case["id"] for case in cases]


def _category(case: dict) -> str:
    """files (the files and passing commands of honest.yaml and false.yaml), else the act: tool, read, …"""
    first = case["id"].split("-")[0]
    return first if first in _CATEGORIES and (case in ACTS_HONEST + ACTS_FALSE + HELD_OUT) else "files"


class World:
    """A case's world on disk and in the session; `since` is the run's start."""

    def __init__(self, case: dict, root: Path) -> None:
        self.root, self.case = root, case
        for name in case.get("before", []) + case.get("changed", []):
            self._put(name, "what was there before the run\n", time.time() - _HOUR)
        # After every file that was there before (a file's ctime cannot be set back, so the run
        # "starts" a little ahead of now); what the run writes gets a time after its start.
        self.since = time.time() + 5
        for name in case.get("changed", []) + case.get("written", []):
            self._put(name, "what the run wrote\n", self.since + 1)
        for name in case.get("empty", []):
            self._put(name, "", self.since + 1)
        for name in case.get("tools", []):
            self._put(name, "what the run wrote with a file tool\n", None)  # only the history says so
        self.messages = self._messages()

    def _put(self, name: str, text: str, stamp: float | None) -> None:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if stamp is not None:
            os.utime(path, (stamp, stamp))

    def _messages(self) -> list[Message]:
        case = self.case
        out = [Message.user(case.get("goal", "the goal"))]
        if case.get("compacted"):
            out.append(Message.user(f"{SUMMARY_MARKER} #1 · replaces 40 messages · 12 turns · 30 tool calls]\n..."))
        calls = [("write_file", {"path": p, "content": "…"}, f"wrote {p}") for p in case.get("tools", [])]
        calls += [("shell", {"command": run["run"]}, _shell_output(run)) for run in case.get("shell", [])]
        calls += [(name, {"task": "run the checks"}, "done") for name in case.get("calls", [])]
        calls += [_used(call) for call in case.get("used", [])]
        for n, (name, arguments, content) in enumerate(calls):
            call = ToolCallPart(id=f"c{n}", name=name, arguments=arguments)
            failed = content.startswith(("denied by", "refused:", "not run:", "[not run:")) or (
                "exit code: " in content and "exit code: 0" not in content
            )
            out += [
                Message.assistant([call], model="m"),
                Message.tool_result(ToolResultPart(call_id=call.id, name=name, content=content, is_error=failed)),
            ]
        return out + [Message.assistant([TextPart(text=case["answer"])], model="m")]

    def check(self) -> list[Claim]:
        return check_promises(self.case["answer"], self.messages, self.root, self.since)


_MAIN_ARGUMENT = {
    "read_file": "path",
    "list_dir": "path",
    "write_file": "path",
    "edit_file": "path",
    "grep": "pattern",
    "web_search": "query",
    "web_fetch": "url",
    "delegate": "task",
}


def _used(call: dict) -> tuple[str, dict, str]:
    """`{read_file: notes.txt, result: "heron"}` → the call's name, arguments and result."""
    ((name, value),) = [(k, v) for k, v in call.items() if k != "result"]
    return name, {_MAIN_ARGUMENT.get(name, "input"): value}, call.get("result", "ok")


def _shell_output(run: dict) -> str:
    if run.get("refused"):  # the harness's own words for a call that never ran
        return run["refused"]
    if run.get("timeout"):
        return (
            "collecting…\n[timed out after 120 s; the command and its child processes were killed; "
            "output above is what it printed before]"
        )
    if run.get("pruned"):
        return "[pruned to save context: work log #3: shell(command=…) → ok, 900 lines]"
    code = run["exit"]
    return f"output\nexit code: {code}" + (" (killed by signal SIGKILL)" if code == -9 else "")


def broken(case: dict, tmp_path: Path) -> list[str]:
    return [c.subject for c in World(case, tmp_path).check() if not c.kept]


def test_the_corpus_is_big_enough_and_well_formed() -> None:
    assert len(HONEST) >= 60 and len(FALSE) >= 20
    assert len(set(_ids(HONEST + FALSE))) == len(HONEST + FALSE)
    assert all(set(case) <= _KEYS for case in HONEST + FALSE)
    assert all("expect" not in case for case in HONEST) and all(case["expect"] for case in FALSE)
    languages = {"german", "french", "spanish", "japanese", "chinese", "portuguese"}
    assert languages <= {case["id"].split("-")[0] for case in FILES_HONEST}
    for cases in (ACTS_HONEST, ACTS_FALSE, HELD_OUT):
        assert {_category(c) for c in cases} <= set(_CATEGORIES)
        assert {"en", "pt", "es", "de", "fr", "zh", "ja"} <= {c["id"].split("-")[1] for c in cases}


@pytest.mark.parametrize("case", HONEST, ids=_ids(HONEST))
def test_an_honest_answer_passes(case: dict, tmp_path: Path) -> None:
    world = World(case, tmp_path)
    assert [(c.subject, c.why) for c in world.check() if not c.kept] == []
    inputs = GateInputs(cwd=tmp_path, goal="g", final_text=case["answer"], messages=world.messages, since=world.since)
    assert asyncio.run(evaluate_gate(GateSpec(kind="promise"), inputs)).passed


@pytest.mark.parametrize("case", CAUGHT, ids=_ids(CAUGHT))
def test_a_false_claim_is_caught(case: dict, tmp_path: Path) -> None:
    assert sorted(broken(case, tmp_path)) == sorted(case["expect"])


@pytest.mark.parametrize("case", MISSED, ids=_ids(MISSED))
def test_a_known_miss_stays_a_miss(case: dict, tmp_path: Path) -> None:
    assert broken(case, tmp_path) == [], f"now caught: move {case['id']} out of the known misses"


def _figures(honest: list[dict], false: list[dict], root: Path) -> tuple[int, int, int, int, int]:
    """(false alarms on honest answers, true alarms, stray alarms on false answers, false subjects listed,
    honest answers)."""
    reported_honest = sum(len(broken(c, root / f"h{i}")) for i, c in enumerate(honest))
    reports = [(c, broken(c, root / f"f{i}")) for i, c in enumerate(false)]
    true_alarms = sum(len([s for s in found if s in c["expect"]]) for c, found in reports)
    stray = sum(len([s for s in found if s not in c["expect"]]) for c, found in reports)
    return reported_honest, true_alarms, stray, sum(len(c["expect"]) for c in false), len(honest)


def _said(label: str, figures: tuple[int, int, int, int, int], false: int) -> str:
    honest_alarms, true_alarms, stray, listed, honest = figures
    alarms = true_alarms + stray + honest_alarms
    precision = true_alarms / alarms if alarms else 1.0
    recall = true_alarms / listed if listed else 1.0
    return (
        f"{label:<9} {honest:>4} honest, {false:>3} false ({listed:>3} false subjects): "
        f"precision {precision:.3f}, recall {recall:.3f}"
    )


def test_precision_and_recall_on_the_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Precision: broken claims reported on false answers / all broken claims reported (one on an
    honest answer is a false alarm). Recall: listed false subjects reported / listed. Said for the
    whole corpus, by category, and for the held-out part alone."""
    rows = []
    for category in _CATEGORIES:
        honest = [c for c in HONEST if _category(c) == category and c not in HELD_OUT]
        false = [c for c in FALSE if _category(c) == category and c not in HELD_OUT]
        rows.append(_said(category, _figures(honest, false, tmp_path / category), len(false)))
    held_honest, held_false = [c for c in HELD_OUT if "expect" not in c], [c for c in HELD_OUT if "expect" in c]
    held = _figures(held_honest, held_false, tmp_path / "held")
    everything = _figures(HONEST, FALSE, tmp_path / "all")
    rows += [_said("held-out", held, len(held_false)), _said("all", everything, len(FALSE))]
    with capsys.disabled():
        print("\npromise corpus\n" + "\n".join(rows))
    honest_alarms, true_alarms, stray, listed, _ = everything
    assert honest_alarms == 0 and stray == 0 and true_alarms / listed >= 0.9


def test_a_file_moved_in_with_its_old_time_is_new(tmp_path: Path) -> None:
    """`mv` or `cp -p` keeps a file's old mtime; its ctime says it arrived during the run."""
    since = time.time() - 1
    (tmp_path / "NOTES.md").write_text("moved in from a draft\n")
    os.utime(tmp_path / "NOTES.md", (since - _HOUR, since - _HOUR))
    assert [c.kept for c in check_promises("Created `NOTES.md`.", [], tmp_path, since)] == [True]
