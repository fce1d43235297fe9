"""The one place failures become exit codes and one-line messages (DESIGN.md section 9)."""

from __future__ import annotations

import sys
from typing import NoReturn

from arreio.engine.errors import ArreioError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_PAUSED = 3
EXIT_CEILING = 4
EXIT_CONFIG = 5
EXIT_CANCELLED = 130


def report(error: ArreioError) -> int:
    """Print the error as one line on stderr and return its exit code."""
    message = " ".join(str(error.message).split()) or type(error).__name__
    print(f"arreio: error: {message}", file=sys.stderr)
    return error.exit_code


def fail(error: ArreioError) -> NoReturn:
    raise SystemExit(report(error))
