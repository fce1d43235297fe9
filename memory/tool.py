"""The `memory` tool: the model's way to add, replace and remove entries in MEMORY.md / USER.md.

Replies are short on success (usage and entry count, never an echo of the entries: the model just
wrote them) and specific on refusal (what to do next). Three failed calls in one turn and the tool
tells the model to stop retrying and answer — memory is a side task, never the reason a turn loops.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ValidationError

from arreio.engine.tools.base import Repeat, Tool, ToolResult
from arreio.engine.tools.run_context import RunContext
from arreio.memory.entries import MemoryRefused, Operation
from arreio.memory.store import MemoryStores, Target, WriteResult, secret_refusal

MAX_FAILURES_PER_TURN = 3

DESCRIPTION = """\
Save lasting facts for future sessions. target user: the user's preferences and corrections; \
memory: facts about the project and environment (commands, layout, quirks). Not task progress, \
one-off details or secrets. add: content; replace: old_text (part of one entry) and content; \
remove: old_text; operations: several at once. When full, merge entries."""


class MemoryOperationInput(BaseModel):
    action: Literal["add", "replace", "remove"]
    target: Literal["memory", "user"] | None = None  # None: the call's target
    content: str | None = None
    old_text: str | None = None


class MemoryInput(BaseModel):
    """Either one action (`action`, `content`, `old_text`) or a batch (`operations`)."""

    target: Literal["memory", "user"] = "memory"
    action: Literal["add", "replace", "remove"] | None = None  # None: `operations` says what to do
    content: str | None = None
    old_text: str | None = None
    operations: list[MemoryOperationInput] | None = None


def operations_by_target(request: MemoryInput) -> dict[Target, list[Operation]]:
    """The request as per-target operation lists (raises `MemoryRefused` when it is malformed)."""
    if request.operations and request.action:
        raise MemoryRefused("send either `action` or `operations`, not both.")
    if request.operations:
        items = [(op.target or request.target, op.action, op.content, op.old_text) for op in request.operations]
    elif request.action:
        items = [(request.target, request.action, request.content, request.old_text)]
    else:
        raise MemoryRefused("no action given: set `action` (add, replace, remove) or `operations`.")
    grouped: dict[Target, list[Operation]] = {}
    for number, (target, action, content, old_text) in enumerate(items, 1):
        where = f"operation {number}: " if len(items) > 1 else ""
        if action in ("add", "replace") and not (content or "").strip():
            raise MemoryRefused(f"{where}`content` is empty: nothing to save.")
        if action in ("replace", "remove") and not (old_text or "").strip():
            raise MemoryRefused(f"{where}`old_text` is required for {action}: a short unique substring of the entry.")
        grouped.setdefault(target, []).append(Operation(action, content=content or "", old_text=old_text or ""))
    return grouped


def success_message(results: list[WriteResult]) -> str:
    parts = []
    for result in results:
        file_name = result.state.path.name
        verb = "updated" if result.changed else "unchanged"
        notes = f" ({'; '.join(result.notes)})" if result.notes else ""
        parts.append(f"{file_name} {verb}{notes}: {result.state.summary()}.")
        if result.changed and not result.state.entries:
            parts.append(f"{file_name} is now empty: its last entry was removed.")
    return " ".join(parts)


class MemoryTool(Tool):
    """The `memory` tool over a `MemoryStores`. One instance per session (it counts failures)."""

    name: ClassVar[str] = "memory"
    description: ClassVar[str] = DESCRIPTION
    input_model: ClassVar[type[BaseModel]] = MemoryInput
    sensitive: ClassVar[bool] = False
    repeat: ClassVar[Repeat] = "few"
    timeout_s: ClassVar[float | None] = 30.0

    def __init__(self, stores: MemoryStores) -> None:
        self.stores = stores
        self._turn_key: tuple[str, int] | None = None
        self._failures = 0

    async def execute(self, args: Any, ctx: RunContext) -> ToolResult:
        key = (ctx.session_id, ctx.turn)
        if key != self._turn_key:
            self._turn_key, self._failures = key, 0
        # Past the failure limit a call is still tried: a valid one goes through (and resets the
        # count); another failure repeats the note to stop.
        try:
            request = args if isinstance(args, MemoryInput) else MemoryInput.model_validate(args)
            operations = operations_by_target(request)
            # The stores refuse a secret too (with the redactor they were made with); the run's decides here.
            refusal = next(
                (
                    why
                    for ops in operations.values()
                    for op in ops
                    if op.content and (why := secret_refusal(op.content, ctx.redactor))
                ),
                None,
            )
            if refusal is not None:
                return self._failed(refusal)
            results = self.stores.apply(operations)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first.get("loc", ())) or "input"
            return self._failed(f"invalid memory call: {where}: {first.get('msg', 'bad input')}")
        except MemoryRefused as refused:
            return self._failed(refused.message)
        self._failures = 0
        return ToolResult(success_message(results))

    def _failed(self, message: str) -> ToolResult:
        self._failures += 1
        if self._failures >= MAX_FAILURES_PER_TURN:
            message = f"{message}\n\n{self._stop_note()}"
        return ToolResult(message, is_error=True)

    @staticmethod
    def _stop_note() -> str:
        return (
            f"Memory writes failed {MAX_FAILURES_PER_TURN} times this turn: stop retrying the memory "
            "tool and answer the user now. You can save the fact in a later turn."
        )
