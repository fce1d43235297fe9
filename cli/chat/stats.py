"""What a chat cost (`/cost`) and how warm it kept the prompt cache.

Two shares, different things:
- *cache share*: of the input tokens the provider billed, the share it reports serving from its
  prompt cache (0 for the offline model and scripts, which report no cache);
- *stable prefix share*: of everything sent across the chat's model requests, the share that
  repeated the previous request's prefix exactly (system blocks, tool schemas, then messages in
  order) — what a prompt cache could serve. Measured from the session's own request records
  (`engine/governance/requests.py`), across runs: each message is a run, and the cache does not care."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arreio.cli.render import money
from arreio.engine.core.wording import counted


def _elements(row: dict[str, Any]) -> list[str]:
    """A request as the cache sees it, in order: the system blocks, the tool schemas, each message."""
    tools = json.dumps(row["tools"], sort_keys=True, ensure_ascii=False)
    return (
        [json.dumps(b, sort_keys=True, ensure_ascii=False) for b in row["system"]]
        + [tools]
        + [json.dumps(m, sort_keys=True, ensure_ascii=False) for m in row["messages"]]
    )


def prefix_share(session_path: Path, run_ids: set[str] | None = None) -> tuple[float, int]:
    """(stable prefix share by characters — a fair stand-in for tokens —, requests measured), over
    the session's requests (only those of `run_ids` when given; each compared with the request just
    before it, whichever run sent that). The first request of a session repeats nothing."""
    from arreio.engine.governance.requests import reconstruct

    rows = reconstruct(session_path)
    previous: list[str] = []
    common = total = measured = 0
    for row in rows:
        elements = _elements(row)
        if run_ids is None or row.get("run_id") in run_ids:
            same = 0
            for now, before in zip(elements, previous):
                if now != before:
                    break
                same += len(now)
            common += same
            total += sum(len(e) for e in elements)
            measured += 1
        previous = elements
    return (common / total if total else 0.0), measured


def cost_lines(state: Any) -> list[str]:
    """`/cost`: this chat's turns on this session, added up."""
    turns = state.turns
    side = getattr(state, "side_costs", [])  # /compact's summaries: tokens and cost outside the turns
    if not turns and not side:
        return ["no turns yet in this chat"]
    spent = [*turns, *side]
    tokens_in = sum(t.input_tokens for t in spent)
    tokens_out = sum(t.output_tokens for t in spent)
    if all(t.free for t in spent):
        cost = "$0 (offline)"
    elif any(t.cost_usd is None and not t.free for t in spent):
        known = sum(t.cost_usd or 0 for t in spent)
        cost = f"at least {money(known)} (a model's price is unknown)"
    else:
        cost = money(sum(t.cost_usd or 0 for t in spent))
    cached = sum((t.cache_share or 0) * t.input_tokens for t in turns)
    share = round(100 * cached / tokens_in) if tokens_in else 0
    lines = [
        (
            f"{counted(len(turns), 'turn')} · {counted(sum(t.steps for t in turns), 'step')} · "
            f"{counted(sum(t.tool_calls for t in turns), 'tool call')}"
            + (f" · {counted(len(side), 'compaction')}" if side else "")
        ),
        f"tokens: {tokens_in:,} in / {tokens_out:,} out · cost: {cost}",
        f"prompt cache: {share}% of input tokens served from the cache (as the provider reports)",
    ]
    if state.session_id:
        try:
            stable, measured = prefix_share(state.store().path_for(state.session_id), {t.run_id for t in turns})
        except Exception:  # noqa: BLE001 - a figure for information; never fails the chat
            measured = 0
        if measured:
            lines.append(
                f"stable prefix: {round(stable * 100)}% of what {counted(measured, 'request')} sent "
                "repeated the request before it (what a prompt cache can serve)"
            )
    return lines
