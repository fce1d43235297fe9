"""What the command line hands a command, checked where it must be.

Python hands over argv bytes that are not UTF-8 as lone surrogates (`\\udcff` for the byte 0xff,
PEP 383). For a file name that is right: on Linux a name may be any bytes, and the surrogates give
the same bytes back when the file is opened. Free text is different: a goal, a memory entry, a
query, a reason or a config value is stored or sent as UTF-8, and a surrogate cannot be encoded —
it would fail deep inside a writer, after part of the work is done. Each command checks its
free-text arguments with `text` first, so such an argument is bad input (exit 2), said in one line
that names it, before anything is written. Path arguments are never checked here.
"""

from __future__ import annotations


def text(value: str | None, what: str) -> str | None:
    """`value` unchanged when it is UTF-8 text (None passes); else a UsageError naming `what`
    ("the goal", "the memory entry") and the first byte that is not."""
    if value is None:
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        from arreio.engine.core.errors import UsageError
        from arreio.engine.core.surrogates import escaped  # the one way a lone surrogate is written out

        bad = escaped(value[error.start])
        shown = f"the byte {bad}" if bad.startswith("\\x") else bad
        raise UsageError(f"{what} is not UTF-8 text ({shown} at character {error.start + 1})") from None
    return value


def enter_folder(cd: object) -> None:
    """`--cd DIR` (`-C`, as `git -C`): from here on everything happens in DIR. A UsageError that says
    what DIR is when it is not a folder one can enter (a file was "no such folder")."""
    import os
    from pathlib import Path

    from arreio.engine.core.errors import UsageError

    path = Path(str(cd))
    if not path.is_dir():
        what = "a file, not a folder" if path.exists() else "no such folder"
        raise UsageError(f"--cd {cd}: {what}")
    try:
        os.chdir(path)
    except OSError as error:
        raise UsageError(f"--cd {cd}: cannot enter it ({error.strerror or error})") from None
