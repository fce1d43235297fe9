"""Rewrite the test modules' asserts once, before pytest-xdist's workers collect them.

pytest rewrites the `assert`s of every test module it imports and caches the result beside the
module (`__pycache__/*-pytest-*.pyc`). On a fresh clone nothing is cached yet, and every worker
collects the whole suite at the same moment, so each rewrote every module itself: ~6 s of CPU a
worker on 2 cores, three times over. Here the controller rewrites them first, one share per core,
and the workers read the cache. The cache holds each source's hash: a changed module is rewritten
again by whoever imports it, as before.

This uses pytest's own rewriting functions (private, `_pytest.assertion.rewrite`); where they are
not what this expects, it does nothing and the workers rewrite as they always did."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def rewrite_ahead(config: pytest.Config, folder: Path) -> None:
    """Cache the rewritten form of every test module and conftest under `folder`, and of the plugins
    rewritten so far, that has none, in as many processes as this one may use cores."""
    try:
        from _pytest.assertion.rewrite import (
            PYC_TAIL,
            _read_pyc,
            _rewrite_test,
            _write_pyc,
            assertstate_key,
            get_cache_dir,
        )

        state = config.stash[assertstate_key]
    except (ImportError, KeyError):
        return
    # and the plugins pytest rewrote before this conftest turned bytecode caching on (PYTHONDONTWRITEBYTECODE)
    plugins = [Path(path) for path in getattr(state.hook, "_rewritten_names", {}).values()]
    todo = []
    for source in sorted([*folder.rglob("test_*.py"), *folder.rglob("conftest.py")]) + plugins:
        pyc = get_cache_dir(source) / (source.name[:-3] + PYC_TAIL)
        if _read_pyc(source, pyc) is None:
            todo.append((source, pyc))

    def rewrite(share: list[tuple[Path, Path]]) -> None:
        for source, pyc in share:
            try:
                source_hash, code = _rewrite_test(source, config)
                pyc.parent.mkdir(exist_ok=True)
                _write_pyc(state, code, source_hash, pyc)
            except (OSError, SyntaxError, TypeError, ValueError):  # its import will say what is wrong
                continue

    shares = max(1, min(len(todo), len(os.sched_getaffinity(0))))
    children = []
    for share in range(1, shares):  # the controller takes share 0 itself
        pid = os.fork()
        if pid == 0:
            try:
                rewrite(todo[share::shares])
            finally:
                os._exit(0)  # never pytest's own exit in a copy of the controller
        children.append(pid)
    rewrite(todo[0::shares])
    for pid in children:
        os.waitpid(pid, 0)
