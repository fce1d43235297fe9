"""A cassette read back: its summary (`arreio cassette show`) and how two compare, call by call
(`arreio cassette diff`). Pure: the cassettes are loaded by `cassette.load_cassette`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from arreio.engine.core.model_io import ToolCallDone, Usage
from arreio.engine.providers.cassette import Cassette, diff_requests
from arreio.engine.providers.pricing import estimate_cost
from arreio.engine.providers.registry import is_offline


def summarise(cassette: Cassette) -> dict[str, Any]:
    """Calls, faults, tools offered and used, tokens, and what replaying it saves (pure)."""

    usage = Usage()
    used: dict[str, int] = {}
    for call in cassette.calls:
        usage = usage + call.usage
        for event in call.events:
            if isinstance(event, ToolCallDone):
                used[event.name] = used.get(event.name, 0) + 1
    model = cassette.header.model
    offered = [t.name for t in cassette.calls[0].request.tools] if cassette.calls else []
    faults = [
        f"call {c.n}: {c.fault.kind}" + (f" (HTTP {c.fault.status})" if c.fault.status else "") + f": {c.fault.message}"
        for c in cassette.calls
        if c.fault is not None
    ]
    return {
        "path": str(cassette.path),
        "version": cassette.header.version,
        "model": model,
        "created_at": cassette.header.created_at,
        "calls": len(cassette.calls),
        "faults": faults,
        "tools_offered": offered,
        "tools_used": used,
        "usage": usage.model_dump(),
        "cost_saved_usd": 0.0 if is_offline(model) else estimate_cost(model, usage),
        "problems": list(cassette.problems),
    }


@dataclass
class CallChange:
    """How call `n` of cassette B relates to call `n` of cassette A."""

    n: int
    status: Literal["same", "changed", "added", "removed"]
    changes: list[str] = field(default_factory=list)


def compare_cassettes(a: Cassette, b: Cassette) -> list[CallChange]:
    """Call by call, in order: same / changed (what) / added (only in B) / removed (only in A)."""
    out: list[CallChange] = []
    for i in range(max(len(a.calls), len(b.calls))):
        if i >= len(a.calls):
            out.append(CallChange(i + 1, "added"))
            continue
        if i >= len(b.calls):
            out.append(CallChange(i + 1, "removed"))
            continue
        old, new = a.calls[i], b.calls[i]
        changes: list[str] = []
        if old.fingerprint != new.fingerprint:
            changes += diff_requests(old.request, new.request) or ["the request differs"]
        if old.reply_digest != new.reply_digest:
            changes.append("the reply differs" + (f" (fault: {new.fault.kind})" if new.fault and not old.fault else ""))
        out.append(CallChange(i + 1, "changed" if changes else "same", changes))
    return out
