"""`arreio mcp serve`: arreio itself as an MCP server over stdio, as `codex mcp-server` and
`claude mcp serve` are. Another agent (or an editor) calls two tools:

- `run(goal, cwd?, model?, max_steps?)` → the final answer, the verdict, the session id;
- `continue(session_id, instruction, cwd?, model?, max_steps?)` → the same, for a further instruction
  in a saved session.

Each call is one run through `arreio.api.run_to_result`, so through the one pipeline with the working
directory's config, sandbox and policy (nothing is assembled here). Nobody answers approvals over MCP:
a call that policy would put to a person is refused, the model is told so, and the result lists it
(`refused_approvals`) — `arreio approve` is not needed afterwards, nothing waits.

stdout is the protocol's channel: nothing else may write there (the SDK guards it while serving; the
runs' tools get no stdin and their output is captured).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

__all__ = ["RunAnswer", "serve"]

DOOR = "runs started by an MCP client"
INSTRUCTIONS = (
    "arreio is a terminal agent. `run` gives it a goal in a working directory and returns its final answer "
    "with the verdict (success, failed, stopped, cancelled) and a session id; `continue` sends a further "
    "instruction to that session. Calls that need a person's approval are refused by policy and listed."
)


class RunAnswer(BaseModel):
    """What one `run` or `continue` call returns (also as JSON text for clients without structured output)."""

    final_answer: str = Field(description="The agent's final answer (empty when the run ended without one).")
    verdict: str = Field(description="success | failed | paused | stopped | cancelled")
    exit_code: int = Field(description="As `arreio run` would exit: 0 success, 1 failed, 4 ceiling reached, ...")
    session_id: str | None = Field(description="The session, to `continue` it.")
    message: str = Field(default="", description="Why a run that did not succeed ended as it did.")
    refused_approvals: list[str] = Field(
        default_factory=list,
        description=(
            "Calls policy refused because they needed a person's approval (what would have run, and the rule)."
        ),
    )
    cost_usd: float | None = Field(default=None, description="Estimated cost; null when the price is unknown.")
    report_path: str | None = None


def build(
    *, model: str | None = None, max_steps: int | None = None, base: Path | None = None, script: Path | None = None
) -> Any:
    """The server, with `model` and `max_steps` as defaults for calls that give none; a call's relative
    `cwd` is taken from `base` (the directory the server was started in). `script`: every call plays
    this offline script (as `arreio run --script`), for testing an MCP client against arreio."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("arreio", instructions=INSTRUCTIONS, log_level="WARNING")
    home = (base or Path.cwd()).resolve()

    async def run(
        goal: str, cwd: str | None = None, model: str | None = None, max_steps: int | None = None
    ) -> RunAnswer:
        return await _one_run(
            goal, None, home, cwd, model or defaults["model"], max_steps or defaults["max_steps"], script
        )

    async def continue_(
        session_id: str,
        instruction: str,
        cwd: str | None = None,
        model: str | None = None,
        max_steps: int | None = None,
    ) -> RunAnswer:
        return await _one_run(
            instruction, session_id, home, cwd, model or defaults["model"], max_steps or defaults["max_steps"], script
        )

    defaults: dict[str, Any] = {"model": model, "max_steps": max_steps}
    server.add_tool(
        run,
        name="run",
        description=(
            "Run arreio on a goal in a working directory (default: where the server started) and return its "
            "final answer, verdict and session id. The run uses that directory's arreio config, sandbox and "
            "approval policy; calls that need a person's approval are refused."
        ),
    )
    server.add_tool(
        continue_,
        name="continue",
        description=(
            "Send a further instruction to a saved arreio session (the session_id a run returned), in the same "
            "working directory, and return the new final answer, verdict and session id."
        ),
    )
    return server


async def _one_run(
    goal: str,
    session_id: str | None,
    home: Path,
    cwd: str | None,
    model: str | None,
    max_steps: int | None,
    script: Path | None,
) -> RunAnswer:
    from mcp.server.mcpserver.exceptions import ToolError

    from arreio.api.running import Refusals, run_to_result
    from arreio.engine.core.errors import ArreioError

    where = home / Path(cwd).expanduser() if cwd else home
    refusals = Refusals(DOOR)
    try:
        result = await run_to_result(
            goal,
            cwd=where,
            model=model,
            max_steps=max_steps,
            resume=session_id,
            approve="refuse",
            script=script,
            _refusals=refusals,
        )
    except ArreioError as error:  # bad input: the call fails with the one line `arreio run` would print
        raise ToolError(error.message) from None
    message = result.message
    if result.refused and not message:
        message = f"{len(result.refused)} call(s) needed a person's approval and were refused by policy"
    return RunAnswer(
        final_answer=result.final_text,
        verdict=result.verdict,
        exit_code=result.exit_code,
        session_id=result.session_id,
        message=message,
        refused_approvals=result.refused,
        cost_usd=result.cost_usd,
        report_path=result.report_path,
    )


def serve(*, model: str | None = None, max_steps: int | None = None, script: Path | None = None) -> None:
    """Serve over stdio until the client closes the connection."""
    import anyio

    anyio.run(build(model=model, max_steps=max_steps, script=script).run_stdio_async)
