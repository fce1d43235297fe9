"""Property: no sequence of curator runs, clock moves, uses, pins, restores (and creates, adoptions)
ever deletes a skill file — everything ever written is still somewhere under skills/ or the archive."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from curator_fakes import T0, clock_at, write_skill
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arreio.curator.curator import Curator
from arreio.curator.library import SkillLibrary
from arreio.curator.lifecycle import Policy
from arreio.curator.skills import USAGE_FILE
from arreio.curator.tools import skill_tools
from arreio.curator.usage import UsageStore
from arreio.engine.core.errors import UsageError
from arreio.engine.tools.run_context import RunContext

NAMES = ("alpha", "beta", "gamma")
name = st.sampled_from(NAMES)
operation = st.one_of(
    st.tuples(st.just("advance"), st.integers(min_value=0, max_value=400)),
    st.tuples(st.just("rewind"), st.integers(min_value=0, max_value=40)),
    st.tuples(st.just("run"), st.booleans()),  # (run, dry_run)
    st.tuples(st.just("use"), name),
    st.tuples(st.just("view"), name),
    st.tuples(st.just("pin"), name, st.booleans()),
    st.tuples(st.just("restore"), name),
    st.tuples(st.just("create"), name, st.sampled_from(["agent", "user", "tool"])),
    st.tuples(st.just("adopt"), name),
)


def files_on_disk(skills_dir: Path) -> dict[str, int]:
    """Unique token → how many files carry it, over skills/ and skills/.archive/."""
    found: dict[str, int] = {}
    for path in skills_dir.rglob("*"):
        if path.is_file() and path.name != USAGE_FILE:
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.startswith("token-"):
                    found[line] = found.get(line, 0) + 1
    return found


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operation, min_size=5, max_size=30))
def test_no_sequence_of_operations_ever_deletes_a_skill_file(operations) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / ".arreio"
        skills_dir = state / "skills"
        skills_dir.mkdir(parents=True)
        clock = clock_at(T0)
        policy = Policy(stale_days=30, archive_days=90)
        usage = UsageStore(skills_dir / USAGE_FILE, clock)
        library = SkillLibrary(skills_dir, clock)
        _, manage = skill_tools(state, clock)
        ctx = RunContext(cwd=Path(tmp))
        written: set[str] = set()
        serial = 0
        # start from a curated library so short sequences already reach stale, archive and collisions
        start = [("create", n, "tool") for n in NAMES[:2]] + [("create", NAMES[2], "user"), ("run", False)]

        for op in start + list(operations):
            kind = op[0]
            if kind == "advance":
                clock.advance(days=op[1])
            elif kind == "rewind":
                clock.advance(days=-op[1])
            elif kind == "run":
                Curator(skills_dir, clock, policy).run(dry_run=op[1])
            elif kind in ("use", "view") and (skills_dir / op[1]).is_dir():
                (usage.record_use if kind == "use" else usage.record_view)(op[1], "agent")
            elif kind == "pin":
                try:
                    library.set_pinned(op[1], op[2])
                except UsageError:
                    pass
            elif kind == "restore":
                try:
                    library.restore(op[1])
                except UsageError:
                    pass
            elif kind == "adopt":
                try:
                    library.adopt(op[1])
                except UsageError:
                    pass
            elif kind == "create" and not (skills_dir / op[1]).exists():
                serial += 1
                token = f"token-{serial}"
                if op[2] == "tool":
                    asyncio.run(
                        manage.execute(
                            manage.input_model.model_validate(
                                {"action": "create", "name": op[1], "description": "d", "body": f"{token}\n"}
                            ),
                            ctx,
                        )
                    )
                    asyncio.run(
                        manage.execute(
                            manage.input_model.model_validate(
                                {
                                    "action": "write_file",
                                    "name": op[1],
                                    "file": "references/x.md",
                                    "content": f"{token}-ref\n",
                                }
                            ),
                            ctx,
                        )
                    )
                    written |= {token, f"{token}-ref"}
                else:
                    write_skill(skills_dir, op[1], created_by=op[2], body=f"{token}\n")
                    written.add(token)

            on_disk = files_on_disk(skills_dir)
            missing = written - set(on_disk)
            assert not missing, f"after {op}: lost {sorted(missing)}"
            assert all(count == 1 for count in on_disk.values()), f"after {op}: duplicated {on_disk}"
