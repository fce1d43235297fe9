"""The goal of a run, read at the edge (`prepare`): given as text, or a file — and a pipe that may
wait on its writer (`--goal <(cmd)`) read without blocking the event loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import os
import stat
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from arreio.engine.core.errors import UsageError
from arreio.engine.core.regular_file import Limit, NotRegularFile, TooLarge, read_bytes

if TYPE_CHECKING:
    from arreio.engine.run.prepare import RunOptions


def read_goal(options: RunOptions) -> str | None:
    """The goal's text: `goal_text`, else the `goal_path` file's (UTF-8, a BOM dropped); None when
    neither is given. A missing, unreadable, empty or oversized goal (more than `Limit.GOAL`) is a
    UsageError, and so is a goal file that is a FIFO on disk or a device: see `_read_goal_file`."""
    if options.goal_text is not None:
        text = options.goal_text
    elif options.goal_path is not None:
        path = _goal_file(options.goal_path, options.cwd)
        try:
            text = _read_goal_file(path).decode("utf-8-sig")  # a BOM some editors add is not part of the goal
        except FileNotFoundError:
            raise UsageError(f"goal file not found: {options.goal_path}") from None
        except NotRegularFile as exc:
            if exc.kind == "a directory":
                raise UsageError(f"goal path is a folder, not a file: {options.goal_path}") from None
            raise UsageError(
                f"goal file {exc.because(str(options.goal_path))}: give a file, or the goal "
                "as text (`--goal -` reads it from stdin)"
            ) from None
        except TooLarge as exc:
            raise UsageError(
                f"goal file {exc.because(str(options.goal_path))} for a goal; put the material in a file the goal names"
            ) from None
        except UnicodeDecodeError:
            raise UsageError(f"goal file is not UTF-8 text: {options.goal_path}") from None
        except OSError as exc:
            raise UsageError(f"cannot read goal file {options.goal_path}: {exc.strerror}") from None
        text = text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
    else:
        return None
    if not text.strip():
        raise UsageError(f"goal is empty: {options.goal_path or 'text'}")
    return text


def _read_goal_file(path: Path) -> bytes:
    """The bytes of a goal file: a regular file of at most `Limit.GOAL` bytes, or a pipe a process
    handed over (`--goal <(cmd)`, `/dev/stdin` on a pipe), read until its writer closes it, up to
    the same limit. A FIFO that is a file on disk is refused, as is a device: a FIFO nobody writes
    to would wait for ever, /dev/zero would fill the memory, and either may have been left in the
    working folder by someone other than the user (an agent's shell can make one)."""
    try:
        info = os.stat(path)
    except OSError:
        info = None
    if info is None or not (stat.S_ISFIFO(info.st_mode) and info.st_dev == _pipe_device()):
        return read_bytes(path, limit=Limit.GOAL)
    with open(path, "rb", buffering=0) as pipe:  # the wait `read_waiting_goal` keeps off the loop
        data = b""
        while len(data) <= Limit.GOAL and (part := pipe.read(Limit.GOAL + 1 - len(data))):
            data += part
    if len(data) > Limit.GOAL:
        raise TooLarge(None, Limit.GOAL)
    return data


@functools.cache
def _pipe_device() -> int | None:
    """The device every anonymous pipe lives on (Linux: pipefs), from a pipe of our own; a named
    FIFO lives on the device of its folder instead. None where a pipe has no such device."""
    read_end, write_end = os.pipe()
    try:
        device = os.fstat(read_end).st_dev
    finally:
        os.close(read_end)
        os.close(write_end)
    return device or None


async def read_waiting_goal(options: RunOptions) -> RunOptions:
    """`options` with a goal file that may wait on a writer (a pipe: `--goal <(cmd)`) read into
    `goal_text`; other options unchanged. Reading such a file blocks until its writer
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
    """Reading `path` may wait on a writer: it is a pipe (one on disk is refused by `read_goal`,
    without waiting; a missing or unreadable one is left to `read_goal` to say)."""
    try:
        mode = path.stat().st_mode  # stat opens nothing: it never waits on a FIFO
    except OSError:
        return False
    return stat.S_ISFIFO(mode)
