"""The goal of a run, read at the edge (`prepare`): given as text, or a file — and a file that may
wait on its writer (a FIFO, `--goal <(cmd)`) read without blocking the event loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
import stat
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from arreio.engine.errors import UsageError

if TYPE_CHECKING:
    from arreio.engine.conveyor.prepare import RunOptions


def read_goal(options: RunOptions) -> str | None:
    """The goal's text: `goal_text`, else the `goal_path` file's (UTF-8, a BOM dropped); None when
    neither is given. A missing, unreadable or empty goal is a UsageError."""
    if options.goal_text is not None:
        text = options.goal_text
    elif options.goal_path is not None:
        path = _goal_file(options.goal_path, options.cwd)
        if not path.exists():
            raise UsageError(f"goal file not found: {options.goal_path}")
        if path.is_dir():
            raise UsageError(f"goal path is a folder, not a file: {options.goal_path}")
        try:
            text = path.read_text(encoding="utf-8-sig")  # a BOM some editors add is not part of the goal
        except UnicodeDecodeError:
            raise UsageError(f"goal file is not UTF-8 text: {options.goal_path}") from None
        except OSError as exc:
            raise UsageError(f"cannot read goal file {options.goal_path}: {exc.strerror}") from None
    else:
        return None
    if not text.strip():
        raise UsageError(f"goal is empty: {options.goal_path or 'text'}")
    return text


async def read_waiting_goal(options: RunOptions) -> RunOptions:
    """`options` with a goal file that may wait on a writer (a FIFO, `--goal <(cmd)`, a device) read
    into `goal_text`; other options unchanged. Opening or reading such a file blocks until its writer
    writes, maybe never, and a blocked event loop runs no signal handler: Ctrl-C and SIGTERM would
    wait as long. It is read on a thread of its own while the loop awaits it, so a cancel ends the
    run at once; the abandoned read is a daemon thread, which the exit does not wait for either."""
    if options.goal_text is not None or options.goal_path is None:
        return options
    if not _may_wait(_goal_file(options.goal_path, options.cwd)):
        return options
    read: concurrent.futures.Future[str | None] = concurrent.futures.Future()

    def reader() -> None:
        if not read.set_running_or_notify_cancel():
            return
        try:
            read.set_result(read_goal(options))
        except BaseException as error:  # noqa: BLE001 - raised where the goal is awaited (a UsageError)
            read.set_exception(error)

    threading.Thread(target=reader, name="arreio-goal", daemon=True).start()
    return replace(options, goal_text=await asyncio.wrap_future(read))


def _goal_file(goal: Path, cwd: Path) -> Path:
    return goal if goal.is_absolute() else cwd / goal


def _may_wait(path: Path) -> bool:
    """Reading `path` may wait on a writer: it is neither a regular file nor a folder (a missing or
    unreadable one is left to `read_goal` to say)."""
    try:
        mode = path.stat().st_mode  # stat opens nothing: it never waits on a FIFO
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))
