"""The one place failures become one-line messages with their exit codes (docs/architecture.md section 9; each
`ArreioError` carries its code, a run's verdict maps to one in `engine/loop/outcome.py`)."""

from __future__ import annotations

import sys

from arreio.engine.core.errors import ArreioError


def report(error: ArreioError) -> int:
    """Print the error as one line on stderr and return its exit code."""
    from arreio.cli.inert import flat  # a message can quote what a file or a server said

    message = flat(str(error.message)) or type(error).__name__
    print(f"arreio: error: {message}", file=sys.stderr)
    return error.exit_code


# The file system said no: not a bug, and not arreio's to fix (a read-only or full disk, a folder
# the user cannot write). errno -> (what to say after the path, exit code).
_REFUSED = {
    "EACCES": ("permission denied", 2),
    "EPERM": ("not permitted", 2),
    "EROFS": ("the file system is read-only", 2),
    "ENOSPC": ("no space left on the device", 1),
    "EDQUOT": ("over the disk quota", 1),
    "EFBIG": ("over the file-size limit (ulimit -f)", 1),
}


def report_os_error(error: OSError) -> int | None:
    """A file-system refusal as one line (the path, why, what to do) and its exit code; None for
    any other OSError, which is left to the caller (an unexpected one is a bug to report)."""
    import errno as errnos

    from arreio.cli.inert import flat

    name = errnos.errorcode.get(error.errno or 0, "")
    if name not in _REFUSED:
        return None
    why, code = _REFUSED[name]
    where = f"cannot write {flat(str(error.filename))}: " if error.filename else ""
    hint = " (a read-only state folder? ARREIO_HOME names another)" if code == 2 else ""
    print(f"arreio: error: {where}{why}{hint}", file=sys.stderr)
    return code
