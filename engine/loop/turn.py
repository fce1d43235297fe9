"""The narrow view a hook gets of the runner asking it (the `Turn` protocol of `engine/loop/hooks.py`):
read-only properties over the runner's state, so no hook can reassign what the runner owns."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arreio.engine.loop.runner import Runner


class TurnView:
    """The narrow view hooks get of a runner (`engine/loop/hooks.py: Turn`): read-only properties."""

    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    agent = property(lambda self: self._runner.agent)
    session = property(lambda self: self._runner.session)
    model = property(lambda self: self._runner.model)
    provider = property(lambda self: self._runner.provider)
    tools = property(lambda self: self._runner.tools)
    system = property(lambda self: self._runner.system)
    settings = property(lambda self: self._runner.settings)
    ctx = property(lambda self: self._runner.ctx)
    totals = property(lambda self: self._runner.totals)
    unit_steps = property(lambda self: self._runner.unit_steps)
    unit_limit = property(lambda self: self._runner.unit_limit)
    last_request = property(lambda self: self._runner.last_request)
    last_done = property(lambda self: self._runner.last_done)
    last_error = property(lambda self: self._runner.last_error)
    stalls = property(lambda self: self._runner.watchdog.stalls)
