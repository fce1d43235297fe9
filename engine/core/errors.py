"""The failure tree. Every failure a user can cause or meet is an `ArreioError` with an exit code.

The CLI turns these into one-line messages and their exit codes in one place (`cli/errors.py`); a
run's verdict maps to its exit code in `engine/loop/outcome.py`; library code raises them with a
message that fits on one line and says what to do next.
"""

from __future__ import annotations


class ArreioError(Exception):
    """Base of all expected failures. `exit_code` follows docs/architecture.md section 9."""

    exit_code = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(ArreioError):
    """Bad input or usage: a missing goal file, a bad flag value, an unknown session id (exit 2)."""

    exit_code = 2


class ConfigError(ArreioError):
    """Unreadable or invalid configuration, an unknown model, a missing key (exit 5)."""

    exit_code = 5


class SessionError(UsageError):
    """A session file that cannot be used at all (not a session, unknown version)."""


class Cancelled(ArreioError):
    """The user cancelled the run (Ctrl-C); the session stays valid (exit 130)."""

    exit_code = 130
