"""Standard input as `arreio run` reads it: the goal itself (`--goal -`, or piped with no goal given), or
context piped next to a goal, attached to it in a fenced block that names it and cut at STDIN_CAP."""

from __future__ import annotations

import os
import sys

STDIN_CAP = 100 * 1024  # piped context beyond this is cut (and the cut is said)
STDIN_WAIT_S = 3.0  # how long piped context or an implied stdin goal may take to start arriving


def _stdin_fd() -> int | None:
    """stdin's descriptor, or None when stdin is not a real stream (a test's in-memory input)."""
    try:
        return sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def _no_stdin() -> bool:
    """There is no stdin at all (a daemon started with it closed)."""
    if sys.stdin is None or not hasattr(sys.stdin, "buffer"):
        return True
    fd = _stdin_fd()
    if fd is None:
        return False
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


def _ready(fd: int, wait_s: float) -> bool:
    """A pipe, FIFO or socket has data (or its end) within `wait_s`; files and devices always do."""
    import select
    import stat

    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return True
    return bool(select.select([fd], [], [], wait_s)[0])


def stdin_goal() -> str:
    """`--goal -`: all of stdin is the goal. It is asked for, so it is waited for (saying so)."""
    from arreio.engine.core.errors import UsageError

    if _no_stdin():
        raise UsageError("--goal - reads the goal from stdin, but there is no stdin")
    fd = _stdin_fd()
    if fd is not None and os.isatty(fd):
        print("arreio: reading the goal from stdin; end it with Ctrl-D", file=sys.stderr)
    elif fd is not None and not _ready(fd, STDIN_WAIT_S):
        print("arreio: waiting for the goal on stdin (--goal -)…", file=sys.stderr)
    data = _goal_bytes()
    return _decode(data, len(data), as_goal=True) or ""


def _goal_bytes() -> bytes:
    """All of stdin, as the goal: at most `Limit.GOAL` bytes (a goal file's limit), else a UsageError;
    `arreio run < /dev/zero` is refused after that much, not read until the memory runs out."""
    from arreio.engine.core.errors import UsageError
    from arreio.engine.core.regular_file import Limit, size_text

    data = sys.stdin.buffer.read(Limit.GOAL + 1)
    if len(data) > Limit.GOAL:
        raise UsageError(
            f"the goal on stdin is over the {size_text(Limit.GOAL)} limit for a goal; put the material "
            "in a file the goal names"
        )
    return data


def piped(*, wait_s: float, cap: int | None) -> tuple[str | None, int | None]:
    """What was piped to stdin (None: stdin is a terminal, empty, or sent nothing within `wait_s`),
    and, when more than `cap` bytes came, the size known to have come (the text is cut at `cap`).

    The wait is bounded because a pipe nobody writes to (a parent process that keeps stdin open)
    would otherwise hang the run; a producer slower than that is said on stderr, with the fix."""
    if _no_stdin():
        return None, None
    fd = _stdin_fd()
    if fd is not None:
        if os.isatty(fd):
            return None, None
        if not _ready(fd, wait_s):
            print(
                f"arreio: warning: nothing arrived on stdin within {wait_s:g} s; running without it "
                "(pipe the input in, or run with `< /dev/null` to say there is none)",
                file=sys.stderr,
            )
            return None, None
    data = _goal_bytes() if cap is None else sys.stdin.buffer.read(cap + 1)
    cut = None
    if cap is not None and len(data) > cap:
        cut = len(data)
        if fd is not None:
            try:
                size = os.fstat(fd).st_size  # a file says how big it is; a pipe only that it had more
                cut = max(cut, size)
            except OSError:
                pass
            from arreio.cli.render import silence

            silence(sys.stdin)  # the producer meets a closed pipe now instead of blocking until we exit
        data = data[:cap]
        newline = data.rfind(b"\n")
        if newline > cap // 2:  # end on a whole line when one is near
            data = data[: newline + 1]
    text = _decode(data, cut or len(data), as_goal=cap is None)
    return (text, cut) if text and text.strip() else (None, None)


def _decode(data: bytes, size: int, *, as_goal: bool) -> str | None:
    """Piped bytes as text, read the way read_file reads a file (UTF-8, a BOM's encoding, cp1252).
    Binary input is not text for a model: as the goal it is bad input; as context it is left out with
    a warning (3,000 random bytes were attached as '5 KB' of mojibake and NULs)."""
    from arreio.engine.core.errors import UsageError
    from arreio.engine.tools.encoding import SNIFF_BYTES, sniff

    encoding = sniff(data[:SNIFF_BYTES])
    if encoding is None:
        if as_goal:
            raise UsageError(
                f"stdin is binary ({size:,} bytes), not a goal: pipe text, or give the goal as an argument"
            )
        print(f"arreio: warning: stdin is binary ({size:,} bytes); it is not attached to the goal", file=sys.stderr)
        return None
    return data.decode(encoding.name, errors="replace").removeprefix("\ufeff")


def _size(n: int) -> str:
    return f"{n:,} bytes" if n < 1024 else f"{n / 1024:,.0f} KB" if n < 1024 * 1024 else f"{n / 1024 / 1024:,.1f} MB"


def attach(goal: str, context: str, cut: int | None) -> str:
    """The goal with piped input below it, in a fence no line of the input can close, named as what
    it is (so the model reads it as material, not as the instruction), and a cut said in words."""
    from arreio.engine.core.prompt import PIPED_INPUT

    longest = max((len(line) - len(line.lstrip("~")) for line in context.splitlines()), default=0)
    fence = "~" * max(3, longest + 1)
    size = len(context.encode("utf-8"))
    note = ""
    if cut is not None:
        more = f"{_size(cut)}" if cut > STDIN_CAP + 1 else f"more than {_size(STDIN_CAP)}"
        note = f"\n[arreio: the piped input was {more}; only its first {_size(size)} is above, the rest was cut]\n"
        print(f"arreio: warning: piped input cut to its first {_size(size)} (it was {more})", file=sys.stderr)
    body = context if context.endswith("\n") else context + "\n"
    return (
        f"{goal.rstrip()}\n\n"
        f"{PIPED_INPUT}, {_size(size)}), attached as context for the goal above:\n\n"
        f"{fence} stdin\n{body}{fence}\n{note}"
    )
