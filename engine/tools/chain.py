"""The protection chain every tool call goes through, whatever the tool's origin (docs/architecture.md 6).

    unknown tool → fill fixed params → validate/coerce → timeout → classify ToolError → catch the rest

A tool failure is data for the model (`ToolResult(is_error=True)`), never a crashed turn, so
`run_tool` returns for every failure. The one exception is `asyncio.CancelledError`: it always
propagates, so Ctrl-C stops the turn at once.

`stream_tool` is how the runner calls it: the same chain, plus the events a long tool emits while it
runs (a sub-agent's own stream), and the stall bound (a tool silent for too long is cut off).
"""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from pydantic import ValidationError

from arreio.engine.core.surrogates import escaped
from arreio.engine.providers.wire import INVALID_ARGS_KEY
from arreio.engine.tools.base import SETTINGS_TIMEOUT, Tool, ToolError, ToolResult
from arreio.engine.tools.registry import ToolRegistry
from arreio.engine.tools.run_context import RunContext

# Long exception texts would flood the context; the start says what went wrong.
_MAX_ERROR_CHARS = 1000
_MAX_VALIDATION_ERRORS = 3


async def run_tool(
    registry: ToolRegistry,
    name: str,
    arguments: dict,
    ctx: RunContext,
    *,
    fixed: Mapping[str, Any] | None = None,
    timeout_s: float | None = None,
) -> ToolResult:
    """Run one tool call through the chain and return its result; never raises except cancel.

    `fixed` holds arguments pinned by configuration; they override what the model sent.
    `timeout_s` overrides the tool's own `timeout_s` (None on both means no chain timeout).
    The result's text is always UTF-8 text (`surrogates.escaped`: a listing may hold a file name
    that is not UTF-8).
    """
    result = await _run_tool(registry, name, arguments, ctx, fixed=fixed, timeout_s=timeout_s)
    content, full = escaped(result.content), None if result.full is None else escaped(result.full)
    if content is not result.content or full is not result.full:
        result = ToolResult(content=content, is_error=result.is_error, images=result.images, full=full)
    return result


async def _run_tool(
    registry: ToolRegistry,
    name: str,
    arguments: dict,
    ctx: RunContext,
    *,
    fixed: Mapping[str, Any] | None,
    timeout_s: float | None,
) -> ToolResult:
    tool = registry.get(name)
    if tool is None:
        return _error(_unknown_tool(name, registry.names()))

    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        return _error(f"{name}: arguments must be a JSON object, got {type(arguments).__name__}")
    if set(arguments) == {INVALID_ARGS_KEY}:
        # what the adapter kept of arguments that did not parse (wire.py); without this the model
        # read "'path' is required; '_invalid_json_arguments' is not an argument" and no word of JSON
        raw = str(arguments[INVALID_ARGS_KEY])
        return _error(
            f"{name}: the arguments sent are not a valid JSON object (got {_short_repr(raw)}, "
            f"{len(raw)} chars), so the tool did not run; call it again with the arguments as "
            "one complete JSON object"
        )
    merged = {**arguments, **(fixed or {})}

    try:
        parsed = tool.input_model.model_validate(merged)
    except ValidationError as exc:
        return _error(describe_validation_error(name, exc))

    limit = timeout_s if timeout_s is not None else tool.timeout_s
    if limit == SETTINGS_TIMEOUT:
        limit = ctx.settings.tools.timeout_s
    try:
        result = await _execute(tool, parsed, ctx, limit)
    except _ChainTimeout:
        return _error(f"{name}: timed out after {_seconds(limit)}s")
    except ToolError as exc:
        return _error(_classify(name, exc))
    except Exception as exc:  # noqa: BLE001 — the chain's job is to turn anything into data
        return _error(_clip(f"internal error in tool {name}: {type(exc).__name__}: {exc}"))

    if not isinstance(result, ToolResult):
        return _error(f"internal error in tool {name}: returned {type(result).__name__}, not a ToolResult")
    return result


async def stream_tool(
    registry: ToolRegistry,
    name: str,
    arguments: dict,
    ctx: RunContext,
    *,
    stall_s: float | None = None,
    stalled: Callable[[str], ToolResult] | None = None,
) -> AsyncIterator[Any]:
    """Run one call through the chain, yielding the events the tool emits while it runs, then its
    `ToolResult` last. A tool that emits nothing for `stall_s` seconds is cancelled and its result
    is `stalled(name)` (the watchdog's words). A cancel cancels the tool."""
    if not getattr(registry.get(name), "emits_events", False):
        async for item in _await_tool(registry, name, arguments, ctx, stall_s=stall_s, stalled=stalled):
            yield item
        return
    queue: asyncio.Queue = asyncio.Queue()
    task = asyncio.ensure_future(run_tool(registry, name, arguments, ctx.for_call(emit=queue.put_nowait)))
    try:
        while not task.done():
            getter = asyncio.ensure_future(queue.get())
            finished, _ = await asyncio.wait({task, getter}, timeout=stall_s, return_when=asyncio.FIRST_COMPLETED)
            if not finished:  # silent for too long: cut it off (the finally cancels the task)
                getter.cancel()
                yield stalled(name) if stalled else _error(f"{name}: no signal for {stall_s:g} s; stopped")
                return
            if getter.done():
                yield getter.result()
            else:
                getter.cancel()
        while not queue.empty():
            yield queue.get_nowait()
        yield task.result()
    finally:
        if not task.done():
            task.cancel()


async def _await_tool(
    registry: ToolRegistry,
    name: str,
    arguments: dict,
    ctx: RunContext,
    *,
    stall_s: float | None,
    stalled: Callable[[str], ToolResult] | None,
) -> AsyncIterator[Any]:
    """`stream_tool` for a tool that emits nothing while it runs: silent for `stall_s` then means
    running that long, so one timeout around the awaited call is the same bound — without a task,
    a queue and a wait per call (~60 µs of every call). Anything emitted all the same is
    yielded before the result."""
    emitted: list[Any] = []
    timer = asyncio.timeout(stall_s)
    try:
        async with timer:
            result = await run_tool(registry, name, arguments, ctx.for_call(emit=emitted.append))
    except TimeoutError:
        if not timer.expired():
            raise
        for item in emitted:
            yield item
        yield stalled(name) if stalled else _error(f"{name}: no signal for {stall_s:g} s; stopped")
        return
    for item in emitted:
        yield item
    yield result


def _unknown_tool(name: str, names: list[str]) -> str:
    """Which tool the model probably meant: an MCP tool called without its `<server>__` prefix
    (`query` for `sqlite__query`), else the nearest name."""
    unprefixed = [n for n in names if n.split("__", 1)[-1] == name and "__" in n]
    close = unprefixed or difflib.get_close_matches(name, names, n=1)
    hint = (
        f" Did you mean {close[0]!r}?"
        if len(close) == 1
        else (f" Did you mean one of {', '.join(map(repr, close))}?" if close else "")
    )
    return f"unknown tool {name!r}.{hint} Available tools: {', '.join(names) or '(none)'}"


class _ChainTimeout(Exception):
    """Our deadline fired (as opposed to a TimeoutError raised inside the tool itself)."""


async def _execute(tool: Tool, parsed: Any, ctx: RunContext, limit: float | None) -> Any:
    if limit is None:
        return await tool.execute(parsed, ctx)
    # asyncio.timeout (what wait_for is built on in 3.12) lets us tell our deadline apart from a
    # TimeoutError the tool raised on its own, which is an ordinary internal error.
    cm = asyncio.timeout(limit)
    try:
        async with cm:
            return await tool.execute(parsed, ctx)
    except TimeoutError:
        if cm.expired():
            raise _ChainTimeout from None
        raise


def _classify(name: str, exc: ToolError) -> str:
    message = _clip(exc.message or str(exc) or type(exc).__name__)
    if exc.transient:
        return f"{name}: {message} (a temporary failure: the same call may work if retried later)"
    return f"{name}: {message} (do not repeat the same call; change the arguments or the approach)"


def describe_validation_error(name: str, exc: ValidationError) -> str:
    """A short readable message naming each bad field, e.g. "read_file: 'path' is required"."""
    problems: list[str] = []
    errors = exc.errors(include_url=False)
    for err in errors[:_MAX_VALIDATION_ERRORS]:
        field = _field_name(err.get("loc", ()))
        kind = err.get("type", "")
        if kind == "missing":
            problems.append(f"'{field}' is required")
        elif kind == "extra_forbidden":
            problems.append(f"'{field}' is not an argument of {name}")
        elif kind == "model_type" or not field:
            problems.append(f"arguments: {err.get('msg', 'invalid')}")
        else:
            got = _short_repr(err.get("input"))
            problems.append(f"'{field}': {err.get('msg', 'invalid')} (got {got})")
    more = len(errors) - _MAX_VALIDATION_ERRORS
    if more > 0:
        problems.append(f"and {more} more problem(s)")
    return f"{name}: " + "; ".join(problems)


def _field_name(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _seconds(limit: float | None) -> str:
    if limit is None:
        return "?"
    return f"{limit:g}"


def _clip(text: str) -> str:
    if len(text) <= _MAX_ERROR_CHARS:
        return text
    return text[:_MAX_ERROR_CHARS] + f" [… {len(text) - _MAX_ERROR_CHARS} chars omitted …]"


def _error(message: str) -> ToolResult:
    return ToolResult(content=message, is_error=True)
