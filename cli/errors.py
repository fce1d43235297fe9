"""The one place failures become one-line messages with their exit codes (DESIGN.md section 9; each
`ArreioError` carries its code, a run's verdict maps to one in `engine/conveyor/outcome.py`)."""

from __future__ import annotations

import sys

from arreio.engine.errors import ArreioError


def report(error: ArreioError) -> int:
    """Print the error as one line on stderr and return its exit code."""
    from arreio.cli.inert import flat  # a message can quote what a file or a server said

    message = flat(str(error.message)) or type(error).__name__
    print(f"arreio: error: {message}", file=sys.stderr)
    return error.exit_code

