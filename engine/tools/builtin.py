"""The built-in tools every run can be given; `cli/deps.py` registers them with the feature tools."""

from __future__ import annotations

from arreio.engine.tools.base import Tool
from arreio.engine.tools.files import EditFile, ListDir, ReadFile, WriteFile
from arreio.engine.tools.search import Grep
from arreio.engine.tools.shell import Shell


def builtin_tools() -> list[Tool]:
    """Fresh instances of the built-ins, in the order the model is told about them."""
    return [ReadFile(), WriteFile(), EditFile(), ListDir(), Grep(), Shell()]
