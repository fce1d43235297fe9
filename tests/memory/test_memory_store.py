"""MemoryStore on real files: atomic locked writes, the drift guard, limits, cross-process safety."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from arreio.engine.core.errors import ConfigError, UsageError
from arreio.memory.entries import MemoryRefused, Operation
from arreio.memory.store import MemoryLimits, MemoryStores


def test_files_live_in_the_state_folder(stores, state):
    stores.memory.add("Project uses uv")
    stores.user.add("User is called Marta")
    assert (state / "MEMORY.md").read_text(encoding="utf-8") == "Project uses uv\n"
    assert (state / "USER.md").read_text(encoding="utf-8") == "User is called Marta\n"


def test_default_limits():
    limits = MemoryLimits()
    assert (limits.memory_chars, limits.user_chars) == (2200, 1375)


def test_limits_from_settings():
    assert MemoryLimits.from_settings({"memory": {"memory_chars": 500}}) == MemoryLimits(500, 1375)
    assert MemoryLimits.from_settings(None) == MemoryLimits()
    with pytest.raises(ConfigError, match="memory.user_chars"):
        MemoryLimits.from_settings({"memory": {"user_chars": "lots"}})


def test_refusal_is_a_usage_error_for_the_cli(stores):
    with pytest.raises(UsageError):
        stores.memory.add("")


def test_writes_entries_with_separator_lines(stores, state):
    for fact in ("one", "two\nlines", "has § inside"):
        stores.memory.add(fact)
    assert (state / "MEMORY.md").read_text(encoding="utf-8") == "one\n§\ntwo\nlines\n§\nhas § inside\n"
    assert stores.memory.entries() == ["one", "two\nlines", "has § inside"]


def test_duplicates_collapse_on_load(stores, state):
    state.mkdir(parents=True)
    (state / "MEMORY.md").write_text("a\n§\nb\n§\na\n", encoding="utf-8")
    assert stores.memory.entries() == ["a", "b"]
    assert stores.memory.read().drifted


def test_add_past_the_limit_is_refused_and_nothing_changes(state, clock):
    stores = MemoryStores(state, MemoryLimits(memory_chars=50, user_chars=50), clock=clock)
    stores.memory.add("x" * 45)
    before = (state / "MEMORY.md").read_bytes()
    with pytest.raises(MemoryRefused, match="MEMORY.md is full"):
        stores.memory.add("y" * 10)
    assert (state / "MEMORY.md").read_bytes() == before


def test_user_store_has_its_own_limit(stores):
    stores.user.add("u" * 1300)
    with pytest.raises(MemoryRefused, match="limit 1375"):
        stores.user.add("v" * 100)
    stores.memory.add("m" * 100)  # the other store is unaffected


def test_no_temp_files_left_behind(stores, state):
    stores.memory.add("a")
    stores.memory.replace("a", "b")
    stores.memory.remove("b")
    leftovers = [path.name for path in state.iterdir() if path.name.endswith(".tmp")]
    assert leftovers == []
    assert (state / "MEMORY.md.lock").exists()


def test_remove_last_entry_leaves_an_empty_file(stores, state):
    stores.memory.add("only")
    stores.memory.remove("only")
    assert (state / "MEMORY.md").read_text(encoding="utf-8") == ""


def test_write_re_reads_the_file_under_the_lock(stores, state):
    stores.memory.add("first")
    # Another writer (here: a hand edit) changed the file since; our write must keep its entry.
    (state / "MEMORY.md").write_text("first\n§\nwritten elsewhere\n", encoding="utf-8")
    stores.memory.add("second")
    assert stores.memory.entries() == ["first", "written elsewhere", "second"]


class TestDriftGuard:
    HAND_EDIT = "first fact\n§\n§\nsecond fact\n§\nfirst fact\n"

    def write_hand_edit(self, state: Path) -> Path:
        state.mkdir(parents=True, exist_ok=True)
        path = state / "MEMORY.md"
        path.write_text(self.HAND_EDIT, encoding="utf-8")
        return path

    @pytest.mark.parametrize(
        "operation", [Operation("remove", old_text="second"), Operation("replace", "new", "second")]
    )
    def test_replace_and_remove_refuse_and_back_up(self, stores, state, operation):
        path = self.write_hand_edit(state)
        with pytest.raises(MemoryRefused) as refused:
            stores.memory.apply([operation])
        assert "edited by hand" in refused.value.message
        assert "MEMORY.md.bak.20260627T160000Z" in refused.value.message
        assert path.read_text(encoding="utf-8") == self.HAND_EDIT
        assert (state / "MEMORY.md.bak.20260627T160000Z").read_text(encoding="utf-8") == self.HAND_EDIT

    def test_add_still_works_and_keeps_the_hand_edit(self, stores, state):
        path = self.write_hand_edit(state)
        result = stores.memory.add("third fact")
        assert result.changed
        assert path.read_text(encoding="utf-8") == self.HAND_EDIT.rstrip() + "\n§\nthird fact\n"
        assert stores.memory.entries() == ["first fact", "second fact", "third fact"]

    def test_clean_file_is_not_drift(self, stores, state):
        state.mkdir(parents=True)
        (state / "MEMORY.md").write_text("a\n§\nb", encoding="utf-8")
        stores.memory.remove("a")
        assert stores.memory.entries() == ["b"]


class TestCrossTargetBatch:
    def test_both_targets_written_together(self, stores):
        stores.apply({"memory": [Operation("add", content="m1")], "user": [Operation("add", content="u1")]})
        assert stores.memory.entries() == ["m1"] and stores.user.entries() == ["u1"]

    def test_failure_in_one_target_writes_neither(self, stores, state):
        with pytest.raises(MemoryRefused):
            stores.apply(
                {"memory": [Operation("add", content="fine")], "user": [Operation("remove", old_text="absent")]}
            )
        assert not (state / "MEMORY.md").exists() and not (state / "USER.md").exists()


def test_unknown_target(stores):
    with pytest.raises(MemoryRefused, match="unknown memory target"):
        stores.get("notes")


WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from arreio.memory.store import MemoryLimits, MemoryStores

    state, name, count, go = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    stores = MemoryStores(state, MemoryLimits(memory_chars=100_000, user_chars=100_000))
    while not go.exists():
        time.sleep(0.001)
    for number in range(count):
        stores.memory.add(f"fact {number} from writer {name}")
    """
)


@pytest.mark.slow
def test_two_processes_adding_concurrently_lose_nothing(tmp_path):
    state = tmp_path / ".arreio"
    go = tmp_path / "go"
    count = 30
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(state), name, str(count), str(go)]) for name in ("A", "B")
    ]
    time.sleep(0.3)  # let both interpreters start, so the writes overlap
    go.touch()
    assert [writer.wait(timeout=60) for writer in writers] == [0, 0]
    entries = MemoryStores(state).memory.entries()
    expected = {f"fact {number} from writer {name}" for number in range(count) for name in ("A", "B")}
    assert set(entries) == expected
    assert len(entries) == 2 * count
