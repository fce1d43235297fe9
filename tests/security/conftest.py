"""Fixtures for the attack suite: an arena per attempt (or per batch of attempts), skipped with the reason
where bubblewrap cannot start a sandbox here."""

from __future__ import annotations

import functools
import shutil
from collections.abc import Iterator

import pytest

from arreio.engine.tools.sandbox.probe import probe_bwrap
from tests.security.arena import ARREIO, Arena, make_arena, remove_arena


@functools.cache
def sandbox_problem() -> str | None:
    """Why bubblewrap cannot sandbox here (None: it can), tried with the mounts a shell call uses."""
    bwrap = shutil.which("bwrap", path="/usr/local/bin:/usr/bin:/bin")
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed"
    if not ARREIO.exists():
        return f"the arreio console script is not installed next to the interpreter ({ARREIO})"
    return probe_bwrap(bwrap).reason  # the engine's own probe: the namespaces and mounts a call uses


def need_sandbox() -> None:
    problem = sandbox_problem()
    if problem is not None:
        pytest.skip(problem)


@pytest.fixture
def arena() -> Iterator[Arena]:
    need_sandbox()
    made = make_arena()
    try:
        yield made
    finally:
        remove_arena(made)


@pytest.fixture
def bare_arena() -> Iterator[Arena]:
    """An arena whose project is not a git repository."""
    need_sandbox()
    made = make_arena(git_repo=False)
    try:
        yield made
    finally:
        remove_arena(made)
